import { formatTimestamp } from "@sched/proto";
import type { BusyInterval } from "@sched/proto";

const HOUR_MS = 3_600_000;

/**
 * The span asked of the provider for a request's [from, to): widened to
 * whole hours, so that requests a moment apart (a recommendation's horizon
 * starts at "now") share one cached answer instead of each calling Google.
 */
export function coveringHours(from: string, to: string): { from: string; to: string } {
  const start = Math.floor(Date.parse(from) / HOUR_MS) * HOUR_MS;
  const end = Math.ceil(Date.parse(to) / HOUR_MS) * HOUR_MS;
  return { from: formatTimestamp(start), to: formatTimestamp(end) };
}

/** The part of each interval (epoch seconds) inside [from, to); those outside are dropped. */
export function clipToSpan(intervals: readonly BusyInterval[], from: string, to: string): BusyInterval[] {
  const start = Math.floor(Date.parse(from) / 1_000);
  const end = Math.ceil(Date.parse(to) / 1_000);
  return intervals.filter(([s, e]) => e > start && s < end).map(([s, e]) => [Math.max(s, start), Math.min(e, end)] as BusyInterval);
}
