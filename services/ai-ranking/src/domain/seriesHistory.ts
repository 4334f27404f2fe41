import { DURATION_MINUTES, MAX_SERIES_YEARS, occurrenceIdOf, type meetingCreated, type PayloadOf } from "@sched/proto";
import { occurrenceStarts } from "@sched/time";
import type { StoredMeeting } from "../db/queries.js";
import { HISTORY_DAYS } from "./patterns.js";

const DAY_MS = 86_400_000;

/** Every meeting event carries these fields (the bus checked it against its schema). */
export type MeetingEvent = PayloadOf<typeof meetingCreated>;

/**
 * What history keeps of one meeting event: the meeting itself, or for a
 * whole series every occurrence its rule gives from HISTORY_DAYS before now
 * on, each under its occurrence id (the id an exception's event uses, so a
 * changed occurrence replaces the one the rule gave), those cancelled
 * (EXDATE) not confirmed, and those changed on their own
 * (`series.changedOccurrences`) at their own time, length and attendees, so
 * a change of the series never puts a moved occurrence back. A change of a
 * confirmed series (an event with `previousStatus`) reaches, as in meetings,
 * only the occurrences not ended when it was made: those ended by then keep
 * what history has. An event about one occurrence (an exception) is that
 * occurrence. `stale`: occurrence ids stored for the series before; those
 * the series no longer has (a new rule or time) stop counting.
 */
export function storedMeetingsOf(event: MeetingEvent, now: number, stale: readonly string[] = []): StoredMeeting[] {
  const m = event.meeting;
  const attendeesOf = (participants: readonly string[]) => [...new Set([event.organizer.email, ...participants].map((e) => e.toLowerCase()))];
  const durationMs = DURATION_MINUTES[m.duration] * 60_000;
  const base = { mode: event.mode, sequence: event.sequence, scheduledAt: new Date(m.createdAt), seriesId: m.seriesId };
  const one = (meetingId: string, start: number, confirmed: boolean, length = durationMs, attendees = attendeesOf(m.participants)): StoredMeeting => ({
    ...base,
    meetingId,
    confirmed,
    start: new Date(start),
    end: new Date(start + length),
    attendees,
  });
  if (!event.series || m.seriesId !== null) return [one(event.meetingId, Date.parse(m.startTime), m.status === "confirmed")];

  const confirmed = m.status === "confirmed";
  // Cancelling or removing a series reaches every occurrence; any other change only those not yet ended.
  const reachesFrom = "previousStatus" in event && confirmed ? Date.parse(event.occurredAt) : -Infinity;
  const cancelled = new Set(event.series.cancelledStarts.map((s) => Date.parse(s)));
  const changed = new Map((event.series.changedOccurrences ?? []).map((c) => [Date.parse(c.originalStartTime), c]));
  const rule = { rule: event.series.rule, timeZone: event.series.timeZone, start: new Date(m.startTime) };
  const starts = occurrenceStarts(rule, new Date(now - HISTORY_DAYS * DAY_MS), new Date(Date.parse(m.startTime) + (MAX_SERIES_YEARS * 366 + 1) * DAY_MS));
  const ofSeries = (o: StoredMeeting): StoredMeeting => ({ ...o, seriesId: event.meetingId });
  const occurrences = starts
    .filter((s) => !changed.has(s.getTime()) && s.getTime() + durationMs > reachesFrom)
    .map((s) => ofSeries(one(occurrenceIdOf(event.meetingId, s), s.getTime(), confirmed && !cancelled.has(s.getTime()))));
  for (const [originalStart, c] of changed) {
    const start = Date.parse(c.startTime);
    const length = DURATION_MINUTES[c.duration] * 60_000;
    if (start + length <= now - HISTORY_DAYS * DAY_MS) continue;
    occurrences.push(ofSeries(one(occurrenceIdOf(event.meetingId, new Date(originalStart)), start, confirmed, length, attendeesOf(c.participants))));
  }
  const current = new Set(occurrences.map((o) => o.meetingId));
  const gone = stale
    .filter((id) => !current.has(id) && endedBy(id, durationMs) > reachesFrom)
    .map((id) => ({ ...ofSeries(one(id, Date.parse(m.startTime), false)), attendees: [] }));
  return [...occurrences, ...gone];
}

/** When an occurrence the rule gave ends, from its id (`<series id>_<original start as YYYYMMDDTHHMMSSZ>`): at its original time. */
function endedBy(occurrenceId: string, durationMs: number): number {
  const t = occurrenceId.slice(occurrenceId.lastIndexOf("_") + 1);
  const start = Date.parse(`${t.slice(0, 4)}-${t.slice(4, 6)}-${t.slice(6, 8)}T${t.slice(9, 11)}:${t.slice(11, 13)}:${t.slice(13, 15)}Z`);
  return Number.isNaN(start) ? Infinity : start + durationMs;
}

/** Whether an event is about a whole series (its occurrences are expanded from it). */
export function isWholeSeries(event: MeetingEvent): boolean {
  return event.series !== undefined && event.meeting.seriesId === null;
}
