import type { Bus, Stoppable } from "@sched/bus";
import type { Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import { formatTimestamp, meetingsRecordResponse } from "@sched/proto";
import { answerResetsOf, claimPollTurns, connectionById, providerEventsByConnection } from "../db/queries.js";
import { answersPresentTime } from "../domain/answeredVersion.js";
import { meetingIdOfUid } from "../domain/ics.js";
import { parseStoredEvent, responseOfPartstat } from "../domain/itipReply.js";
import { everyInterval } from "./pollRounds.js";
import type { ConnectionVault } from "./vault.js";

export interface CalDavAnswerSettings {
  /** How often each connection's meeting events are read again. */
  everyMs: number;
  timeoutMs: number;
  uidDomain: string;
}


/**
 * Reads participants' answers back from the organizers' CalDAV calendars:
 * a scheduling server writes each attendee's reply into the organizer's
 * copy as PARTSTAT. Every interval, per connection, the events of its
 * meetings are read in one REPORT per calendar (not one request per
 * meeting), and an answer not seen before is sent to meetings to record.
 * Replicas share the work: each round a replica polls only the connections
 * whose turn it took (claimPollTurns), so each connection is read once an
 * interval, not once per replica.
 */
export function pollCalDavAnswers(db: Knex, bus: Bus, vault: ConnectionVault, logger: Logger, settings: CalDavAnswerSettings): Stoppable {
  const log = logger.child({ component: "caldav-answers" });
  /** The answers already handed to meetings, so an unchanged calendar costs meetings nothing. */
  const seen = new Set<string>();

  const pollConnection = async (connectionId: string, events: { meetingId: string; providerEventId: string }[]) => {
    const connection = await connectionById(db, connectionId);
    if (!connection || connection.status !== "active") return;
    const signal = AbortSignal.timeout(settings.timeoutMs);
    const account = await vault.caldav(connection, settings.timeoutMs, signal);
    const read = await account.readEvents(events.map((e) => e.providerEventId), signal);
    const resets = await answerResetsOf(db, events.map((e) => e.meetingId));
    for (const { ics } of read) {
      const parsed = parseStoredEvent(ics);
      const meetingId = parsed.ok ? meetingIdOfUid(parsed.value.uid, settings.uidDomain) : undefined;
      // A copy not yet replaced after a new time holds the answers to the time before.
      if (!parsed.ok || !meetingId || !answersPresentTime(parsed.value.sequence, resets.get(meetingId))) continue;
      for (const attendee of parsed.value.attendees) {
        const response = responseOfPartstat(attendee.partstat);
        // A new version of the meeting may have asked everyone again: the same answer to it is news.
        const key = `${meetingId}|${parsed.value.sequence}|${attendee.email}|${response}`;
        if (!response || seen.has(key)) continue;
        const { outcome } = await bus.request(
          meetingsRecordResponse,
          { mode: "live", meetingId, organizerEmail: parsed.value.organizer, email: attendee.email, response, respondedAt: formatTimestamp(new Date()), source: "caldav" },
          { timeoutMs: settings.timeoutMs },
        );
        seen.add(key);
        if (outcome === "applied") log.info({ meetingId, response }, "answer read from the organizer's calendar");
      }
    }
  };

  return everyInterval(
    async (stopped) => {
      const due = await providerEventsByConnection(db, "caldav");
      const mine = await claimPollTurns(db, due.map((d) => d.connectionId), settings.everyMs);
      for (const { connectionId, events } of due) {
        if (stopped()) return;
        if (!mine.has(connectionId)) continue;
        await pollConnection(connectionId, events).catch((err: unknown) => log.warn({ connectionId, error: err instanceof Error ? err.message : String(err) }, "could not read answers from a CalDAV calendar; trying next time"));
      }
    },
    settings.everyMs,
    log,
  );
}
