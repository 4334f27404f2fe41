import type { Bus } from "@sched/bus";
import type { Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import type { calendar_v3 } from "@googleapis/calendar";
import { answeredApartOf, connectionById, type ProviderEvent } from "../db/queries.js";
import { answersOfGoogleEvents } from "../domain/calendarAnswers.js";
import { googleFailure } from "./google.js";
import { answerRecorder } from "./answerRecorder.js";
import { answerPollRounds, type AnswerPollSettings, type PollRounds } from "./pollRounds.js";
import type { ConnectionVault } from "./vault.js";

export interface GoogleAnswerSettings extends AnswerPollSettings {
  /** How far ahead meetings' answers are read: the list spans from a day ago to this many days on. */
  windowDays: number;
}

/** Events of one list page; Google follows with `nextPageToken` beyond it. */
const PAGE_SIZE = 2_500;

/**
 * Reads attendees' answers back from organizers' Google calendars: Google
 * writes each attendee's answer into the organizer's event
 * (`attendees[].responseStatus`). Every interval, per connection, one list
 * of the primary calendar's events over the coming window (more only past
 * 2,500 events) is read, its events matched with the ones this service
 * inserted, and an answer not seen before is sent to meetings to record.
 * Google keeps no time of the answer: it is dated when first read. A series
 * is listed as its recurring event (answers to the whole series, sent for
 * the series' id) and its instances changed on their own, an attendee's
 * answer to one occurrence among them (sent for the occurrence's id where
 * it differs from their answer to the series).
 */
export function pollGoogleAnswers(db: Knex, bus: Bus, vault: ConnectionVault, logger: Logger, settings: GoogleAnswerSettings & { timeoutMs: number }): PollRounds {
  const log = logger.child({ component: "google-answers" });
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
          // Series as one item each, with their instances changed on their own (an answer to one occurrence makes one) beside them.
          singleEvents: false,
          maxResults: PAGE_SIZE,
          fields: "items(id,status,recurringEventId,originalStartTime,attendees(email,responseStatus)),nextPageToken",
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

  const record = answerRecorder(db, bus, log, { source: "google", calendarName: "Google" }, settings.timeoutMs);

  const pollConnection = async (connectionId: string, ours: ProviderEvent[]) => {
    const read = await readEvents(connectionId);
    if (!read) return;
    const apart = await answeredApartOf(db, ours.map((e) => e.meetingId));
    const answeredApart = (occurrenceId: string, email: string) => apart.has(`${occurrenceId}|${email}`);
    for (const { meeting, answers } of answersOfGoogleEvents(read, ours, answeredApart)) for (const answer of answers) await record(meeting, answer, apart);
  };

  return answerPollRounds(db, "google", settings, log, pollConnection);
}

