import type { Bus, Stoppable } from "@sched/bus";
import type { Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import { formatTimestamp, meetingsRecordResponse, type GivenResponse } from "@sched/proto";
import type { calendar_v3 } from "@googleapis/calendar";
import { connectionById } from "../db/connections.js";
import { providerEventsByConnection, type ProviderEvent } from "../db/deliveries.js";
import { googleFailure } from "./google.js";
import { everyInterval } from "./pollRounds.js";
import type { ConnectionVault } from "./vault.js";

export interface GoogleAnswerSettings {
  /** How often each connection's calendar is read again. */
  everyMs: number;
  /** How far ahead meetings' answers are read: the list spans from a day ago to this many days on. */
  windowDays: number;
}

/** Events of one list page; Google follows with `nextPageToken` beyond it. */
const PAGE_SIZE = 2_500;

const GIVEN: Record<string, GivenResponse> = { accepted: "accepted", declined: "declined", tentative: "tentative" };

/**
 * Reads attendees' answers back from organizers' Google calendars: Google
 * writes each attendee's answer into the organizer's event
 * (`attendees[].responseStatus`). Every interval, per connection, one list
 * of the primary calendar's events over the coming window (more only past
 * 2,500 events) is read, its events matched with the ones this service
 * inserted, and an answer not seen before is sent to meetings to record.
 * Google keeps no time of the answer: it is dated when first read.
 */
export function pollGoogleAnswers(db: Knex, bus: Bus, vault: ConnectionVault, logger: Logger, settings: GoogleAnswerSettings & { timeoutMs: number }): Stoppable {
  const log = logger.child({ component: "google-answers" });
  /** The answers already handed to meetings, so an unchanged calendar costs meetings nothing. */
  const seen = new Set<string>();

  const readEvents = async (connectionId: string): Promise<calendar_v3.Schema$Event[] | undefined> => {
    const connection = await connectionById(db, connectionId);
    if (!connection || connection.status !== "active") return undefined;
    const { calendar } = vault.session(connection);
    const now = Date.now();
    const events: calendar_v3.Schema$Event[] = [];
    let pageToken: string | undefined;
    try {
      do {
        const res = await calendar.events.list({
          calendarId: "primary",
          timeMin: new Date(now - 86_400_000).toISOString(),
          timeMax: new Date(now + settings.windowDays * 86_400_000).toISOString(),
          singleEvents: true,
          maxResults: PAGE_SIZE,
          fields: "items(id,status,attendees(email,responseStatus)),nextPageToken",
          ...(pageToken ? { pageToken } : {}),
        });
        events.push(...(res.data.items ?? []));
        pageToken = res.data.nextPageToken ?? undefined;
      } while (pageToken);
    } catch (err) {
      const failure = googleFailure(err);
      if (failure.kind === "revoked") await vault.markBroken(connection, failure.message);
      throw failure;
    }
    return events;
  };

  const pollConnection = async (connectionId: string, ours: ProviderEvent[]) => {
    const read = await readEvents(connectionId);
    if (!read) return;
    const byEventId = new Map(ours.map((e) => [e.providerEventId, e]));
    for (const event of read) {
      const meeting = event.id ? byEventId.get(event.id) : undefined;
      if (!meeting || event.status === "cancelled") continue;
      for (const attendee of event.attendees ?? []) {
        const email = attendee.email?.toLowerCase();
        const response = attendee.responseStatus ? GIVEN[attendee.responseStatus] : undefined;
        if (!email || !response) continue;
        const key = `${meeting.meetingId}|${email}|${response}`;
        if (seen.has(key)) continue;
        const { outcome } = await bus.request(
          meetingsRecordResponse,
          { mode: "live", meetingId: meeting.meetingId, organizerEmail: meeting.organizerEmail, email, response, respondedAt: formatTimestamp(new Date()), source: "google" },
          { timeoutMs: settings.timeoutMs },
        );
        seen.add(key);
        if (outcome === "applied") log.info({ meetingId: meeting.meetingId, response }, "answer read from the organizer's Google calendar");
      }
    }
  };

  return everyInterval(
    async (stopped) => {
      for (const { connectionId, events } of await providerEventsByConnection(db, "google")) {
        if (stopped()) return;
        await pollConnection(connectionId, events).catch((err: unknown) => log.warn({ connectionId, error: err instanceof Error ? err.message : String(err) }, "could not read answers from a Google calendar; trying next time"));
      }
    },
    settings.everyMs,
    log,
  );
}
