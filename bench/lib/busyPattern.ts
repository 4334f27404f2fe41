import { DURATIONS, type Duration } from "@sched/proto";
import { DURATION_MINUTES } from "./seed.js";

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;
/** 12:00–14:00 UTC stays free for everyone, so a common slot exists however full the calendars are. */
const OPEN_FROM_MIN = 12 * 60;
const OPEN_TO_MIN = 14 * 60;

export interface PlacedMeeting {
  start: number;
  duration: Duration;
}

/**
 * `count` meetings of 15 minutes to 2 hours on the quarter hours of `days`
 * days from `firstDay` (a UTC midnight), anywhere but in 12:00–14:00 UTC.
 * They overlap freely: a person with 2,000 of them in 31 days is busy most of
 * every day, and the recommendation has real merging and scoring to do.
 */
export function busyPattern(next: () => number, count: number, firstDay: number, days: number): PlacedMeeting[] {
  const meetings: PlacedMeeting[] = [];
  while (meetings.length < count) {
    const duration = DURATIONS[Math.floor(next() * DURATIONS.length)]!;
    const minutes = DURATION_MINUTES[duration];
    const startMin = Math.floor(next() * 96) * 15;
    if (startMin < OPEN_TO_MIN && startMin + minutes > OPEN_FROM_MIN) continue;
    const day = Math.floor(next() * days);
    meetings.push({ start: firstDay + day * DAY_MS + startMin * MINUTE_MS, duration });
  }
  return meetings;
}
