import type { Event } from "@microsoft/microsoft-graph-types";
import type { Bus, Stoppable } from "@sched/bus";
import type { Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import { formatTimestamp, meetingsRecordResponse } from "@sched/proto";
import { connectionById } from "../db/connections.js";
import { providerEventsByConnection, type ProviderEvent } from "../db/deliveries.js";
import { graphResponseTime, responseOfGraph } from "../domain/graphEvent.js";
import { readCalendarView } from "./graphCalendarView.js";
import { everyInterval } from "./pollRounds.js";
import type { ConnectionVault } from "./vault.js";

export interface MicrosoftAnswerSettings {
  /** How often each connection's calendar is read again. */
  everyMs: number;
  /** How far ahead meetings' answers are read: the calendar view spans from a day ago to this many days on. */
  windowDays: number;
  timeoutMs: number;
}

/**
 * Reads attendees' answers back from organizers' Microsoft calendars:
 * Exchange writes each attendee's answer into the organizer's event
 * (`attendees[].status`). Every interval, per connection, one calendar
 * view over the coming window (more only past 500 events, or a window
 * longer than Graph's 1,825 days) is read, its
 * events matched with the ones this service created, and an answer not
 * seen before is sent to meetings to record.
 */
export function pollMicrosoftAnswers(db: Knex, bus: Bus, vault: ConnectionVault, logger: Logger, settings: MicrosoftAnswerSettings): Stoppable {
  const log = logger.child({ component: "microsoft-answers" });
  /** The answers already handed to meetings, so an unchanged calendar costs meetings nothing. */
  const seen = new Set<string>();

  const readOrganizerCalendar = async (connectionId: string): Promise<Event[] | undefined> => {
    const connection = await connectionById(db, connectionId);
    if (!connection || connection.status !== "active") return undefined;
    const session = vault.microsoft(connection);
    const now = Date.now();
    try {
      return await readCalendarView(session, "/me/calendarView", now - 86_400_000, now + settings.windowDays * 86_400_000, ["attendees", "isCancelled"]);
    } catch (err) {
      const failure = session.failureOf(err);
      if (failure.kind === "revoked") await vault.markBroken(connection, failure.message);
      throw failure;
    }
  };

  const pollConnection = async (connectionId: string, ours: ProviderEvent[]) => {
    const read = await readOrganizerCalendar(connectionId);
    if (!read) return;
    const byEventId = new Map(ours.map((e) => [e.providerEventId, e]));
    for (const event of read) {
      const meeting = event.id ? byEventId.get(event.id) : undefined;
      if (!meeting || event.isCancelled) continue;
      for (const attendee of event.attendees ?? []) {
        const email = attendee.emailAddress?.address?.toLowerCase();
        const response = responseOfGraph(attendee.status?.response);
        if (!email || !response) continue;
        const respondedAt = graphResponseTime(attendee.status?.time) ?? formatTimestamp(new Date());
        const key = `${meeting.meetingId}|${email}|${response}|${attendee.status?.time ?? ""}`;
        if (seen.has(key)) continue;
        const { outcome } = await bus.request(
          meetingsRecordResponse,
          { mode: "live", meetingId: meeting.meetingId, organizerEmail: meeting.organizerEmail, email, response, respondedAt, source: "microsoft" },
          { timeoutMs: settings.timeoutMs },
        );
        seen.add(key);
        if (outcome === "applied") log.info({ meetingId: meeting.meetingId, response }, "answer read from the organizer's Microsoft calendar");
      }
    }
  };

  return everyInterval(
    async (stopped) => {
      for (const { connectionId, events } of await providerEventsByConnection(db, "microsoft")) {
        if (stopped()) return;
        await pollConnection(connectionId, events).catch((err: unknown) => log.warn({ connectionId, error: err instanceof Error ? err.message : String(err) }, "could not read answers from a Microsoft calendar; trying next time"));
      }
    },
    settings.everyMs,
    log,
  );
}
