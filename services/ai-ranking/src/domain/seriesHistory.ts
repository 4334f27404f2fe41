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
 * (EXDATE) not confirmed. An event about one occurrence (an exception) is
 * that occurrence. `stale`: occurrence ids stored for the series before;
 * those the series no longer has (a new rule or time) stop counting.
 */
export function storedMeetingsOf(event: MeetingEvent, now: number, stale: readonly string[] = []): StoredMeeting[] {
  const m = event.meeting;
  const attendees = [...new Set([event.organizer.email, ...m.participants].map((e) => e.toLowerCase()))];
  const durationMs = DURATION_MINUTES[m.duration] * 60_000;
  const base = { mode: event.mode, sequence: event.sequence, scheduledAt: new Date(m.createdAt), seriesId: m.seriesId };
  const one = (meetingId: string, start: number, confirmed: boolean): StoredMeeting => ({ ...base, meetingId, confirmed, start: new Date(start), end: new Date(start + durationMs), attendees });
  if (!event.series || m.seriesId !== null) return [one(event.meetingId, Date.parse(m.startTime), m.status === "confirmed")];

  const cancelled = new Set(event.series.cancelledStarts.map((s) => Date.parse(s)));
  const rule = { rule: event.series.rule, timeZone: event.series.timeZone, start: new Date(m.startTime) };
  const starts = occurrenceStarts(rule, new Date(now - HISTORY_DAYS * DAY_MS), new Date(Date.parse(m.startTime) + (MAX_SERIES_YEARS * 366 + 1) * DAY_MS));
  const ofSeries = (o: StoredMeeting): StoredMeeting => ({ ...o, seriesId: event.meetingId });
  const occurrences = starts.map((s) => ofSeries(one(occurrenceIdOf(event.meetingId, s), s.getTime(), m.status === "confirmed" && !cancelled.has(s.getTime()))));
  const current = new Set(occurrences.map((o) => o.meetingId));
  const gone = stale.filter((id) => !current.has(id)).map((id) => ({ ...ofSeries(one(id, Date.parse(m.startTime), false)), attendees: [] }));
  return [...occurrences, ...gone];
}

/** Whether an event is about a whole series (its occurrences are expanded from it). */
export function isWholeSeries(event: MeetingEvent): boolean {
  return event.series !== undefined && event.meeting.seriesId === null;
}
