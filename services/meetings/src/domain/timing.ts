import { DURATION_MINUTES, type Duration } from "@sched/proto";


const MINUTE_MS = 60_000;
/** Bounds on any meeting's length; they turn "ended before/after t" into a start-time range an index can serve. */
export const SHORTEST_MEETING_MS = 15 * MINUTE_MS;
export const LONGEST_MEETING_MS = 120 * MINUTE_MS;

export function durationMs(duration: Duration): number {
  return DURATION_MINUTES[duration] * MINUTE_MS;
}

export function endTimeOf(startTime: Date, duration: Duration): Date {
  return new Date(startTime.getTime() + durationMs(duration));
}

/** A meeting has ended when its end is not after now (api-decisions part 5). */
export function hasEnded(meeting: { startTime: Date; duration: Duration }, now: Date): boolean {
  return endTimeOf(meeting.startTime, meeting.duration).getTime() <= now.getTime();
}

export { formatTimestamp } from "@sched/proto";

/** Drops fractions of a second (never rounds up into the next second). */
export function truncateToSecond(time: Date): Date {
  return new Date(Math.floor(time.getTime() / 1_000) * 1_000);
}
