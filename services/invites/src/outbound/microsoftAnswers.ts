import type { Event } from "@microsoft/microsoft-graph-types";
import type { Bus } from "@sched/bus";
import type { Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import { answeredApartOf, connectionById, type ProviderEvent } from "../db/queries.js";
import { answersToRecord, type ShownAnswer } from "../domain/calendarAnswers.js";
import { graphResponseTime, responseOfGraph } from "../domain/graphEvent.js";
import { readCalendarView } from "./graphCalendarView.js";
import type { MicrosoftSession } from "./microsoft.js";
import { answerRecorder } from "./answerRecorder.js";
import { answerPollRounds, type AnswerPollSettings, type PollRounds } from "./pollRounds.js";
import type { ConnectionVault } from "./vault.js";

export interface MicrosoftAnswerSettings extends AnswerPollSettings {
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
 * seen before is sent to meetings to record. A series with occurrences in
 * the window costs one more read, of its recurring event: answers to the
 * series go to the series' id, an answer to one occurrence that differs
 * from it to the occurrence's id (calendarAnswers).
 */
export function pollMicrosoftAnswers(db: Knex, bus: Bus, vault: ConnectionVault, logger: Logger, settings: MicrosoftAnswerSettings): PollRounds {
  const log = logger.child({ component: "microsoft-answers" });
  const readOrganizerCalendar = async (connectionId: string): Promise<{ events: Event[]; session: MicrosoftSession } | undefined> => {
    const connection = await connectionById(db, connectionId);
    if (!connection || connection.status !== "active") return undefined;
    const session = vault.microsoft(connection);
    const now = Date.now();
    try {
      const fields = ["attendees", "isCancelled", "type", "seriesMasterId", "originalStart"];
      return { events: await readCalendarView(session, "/me/calendarView", now - 86_400_000, now + settings.windowDays * 86_400_000, fields), session };
    } catch (err) {
      const failure = session.failureOf(err);
      if (failure.kind === "revoked") await vault.markBroken(connection, failure.message);
      throw failure;
    }
  };

  /** A series' recurring event as Graph keeps it, read once a round: its attendees' answers to the whole series. */
  const readSeriesMaster = async (session: MicrosoftSession, masterId: string): Promise<Event | undefined> => {
    try {
      return (await session.graph.api(`/me/events/${encodeURIComponent(masterId)}`).select(["id", "attendees", "isCancelled"]).get()) as Event;
    } catch (err) {
      throw session.failureOf(err);
    }
  };

  const record = answerRecorder(db, bus, log, { source: "microsoft", calendarName: "Microsoft" }, settings.timeoutMs);

  /**
   * A single event of ours gives answers to its meeting; the occurrences of
   * a series of ours (calendarView lists occurrences, not the series) send
   * the round to the series' event for the answers to the whole series, and
   * give those an attendee gave one occurrence on its own.
   */
  const pollConnection = async (connectionId: string, ours: ProviderEvent[]) => {
    const read = await readOrganizerCalendar(connectionId);
    if (!read) return;
    const byEventId = new Map(ours.map((e) => [e.providerEventId, e]));
    const apart = await answeredApartOf(db, ours.map((e) => e.meetingId));
    const answeredApart = (occurrenceId: string, email: string) => apart.has(`${occurrenceId}|${email}`);
    const instancesBySeries = new Map<string, Event[]>();
    for (const event of read.events) {
      if (event.isCancelled) continue;
      const single = event.id ? byEventId.get(event.id) : undefined;
      if (single) for (const answer of answersToRecord(single.meetingId, shownAnswers(event))) await record(single, answer, apart);
      else if (event.seriesMasterId && byEventId.has(event.seriesMasterId)) instancesBySeries.set(event.seriesMasterId, [...(instancesBySeries.get(event.seriesMasterId) ?? []), event]);
    }
    for (const [masterId, instances] of instancesBySeries) {
      const series = byEventId.get(masterId)!;
      const master = await readSeriesMaster(read.session, masterId);
      if (!master || master.isCancelled) continue;
      const ofInstances = instances.filter((i) => i.originalStart).map((i) => ({ originalStart: i.originalStart!, shown: shownAnswers(i) }));
      for (const answer of answersToRecord(series.meetingId, shownAnswers(master), ofInstances, answeredApart)) await record(series, answer, apart);
    }
  };

  return answerPollRounds(db, "microsoft", settings, log, pollConnection);
}

/** The answers an event's attendees gave, as Graph shows them (none for an attendee who has not answered). */
function shownAnswers(event: Pick<Event, "attendees">): ShownAnswer[] {
  return (event.attendees ?? []).flatMap((attendee) => {
    const email = attendee.emailAddress?.address;
    const response = responseOfGraph(attendee.status?.response);
    return email && response ? [{ email, response, at: graphResponseTime(attendee.status?.time) }] : [];
  });
}
