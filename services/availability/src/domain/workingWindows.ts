import type { WorkingHoursEntry } from "@sched/proto";
import { WEEKDAYS } from "@sched/proto";
import { DAY_MS, MINUTE_MS, parseLocalTime, wallMidnight, type LocalDate, ZoneClock } from "@sched/time";
import { merge, type Interval } from "./intervals.js";

/**
 * The instants a person works on one local date: each working-hours entry for that
 * weekday becomes [start, end) on the zone's clock.
 *
 * Daylight-saving days follow ZoneClock's rule: a start or end inside a skipped
 * hour moves forward by the gap (02:30 → 03:30 on a spring-forward night in
 * Berlin), one inside a repeated hour takes the first occurrence (02:30 CEST,
 * not 02:30 CET). A window that ends up empty or inverted that way is dropped:
 * 02:30–03:30 in Berlin on 2026-03-29 would be 03:30–03:30, and 02:30–03:15 would
 * be 03:30–03:15. Windows are cut to the local day, so a day's windows never
 * reach into the next one.
 *
 * The result is merged: overlapping or touching entries on one day form one
 * window; separate entries stay separate windows with a gap between them.
 */
export function workingWindowsOn(localDate: LocalDate, zone: string, workingHours: readonly WorkingHoursEntry[]): Interval[] {
  const windows: Interval[] = [];
  pushDayWindows(windows, ZoneClock.of(zone), wallMidnight(localDate), entriesByWeekday(workingHours));
  return merge(windows);
}

/**
 * Every working window of the local dates that overlap [from, to), merged and in
 * order. Windows are not cut to the range.
 */
export function workingWindowsBetween(from: number, to: number, zone: string, workingHours: readonly WorkingHoursEntry[]): Interval[] {
  if (workingHours.length === 0 || to <= from) return [];
  const clock = ZoneClock.of(zone);
  const byWeekday = entriesByWeekday(workingHours);
  const lastMidnight = Math.floor(clock.toWall(to - 1) / DAY_MS) * DAY_MS;
  const windows: Interval[] = [];
  for (let midnight = Math.floor(clock.toWall(from) / DAY_MS) * DAY_MS; midnight <= lastMidnight; midnight += DAY_MS) {
    pushDayWindows(windows, clock, midnight, byWeekday);
  }
  return merge(windows.filter((w) => w.end > from && w.start < to));
}

type MinuteSpan = readonly [start: number, end: number];

/** Entries as minute spans, indexed like WEEKDAYS (0 = Monday). */
function entriesByWeekday(workingHours: readonly WorkingHoursEntry[]): MinuteSpan[][] {
  const byDay: MinuteSpan[][] = WEEKDAYS.map(() => []);
  for (const entry of workingHours) {
    const start = parseLocalTime(entry.start);
    const end = parseLocalTime(entry.end);
    if (start === null || end === null) throw new RangeError(`invalid working hours ${entry.start}–${entry.end}`);
    byDay[WEEKDAYS.indexOf(entry.day)]!.push([start, end]);
  }
  return byDay;
}

function pushDayWindows(out: Interval[], clock: ZoneClock, midnight: number, byWeekday: readonly MinuteSpan[][]): void {
  // 1970-01-01, wall day 0, was a Thursday: index 3 when Monday is 0.
  const spans = byWeekday[(((Math.floor(midnight / DAY_MS) + 3) % 7) + 7) % 7]!;
  if (spans.length === 0) return;
  const dayStart = clock.fromWall(midnight);
  const dayEnd = clock.fromWall(midnight + DAY_MS);
  for (const [startMinute, endMinute] of spans) {
    const start = Math.max(clock.fromWall(midnight + startMinute * MINUTE_MS), dayStart);
    const end = Math.min(clock.fromWall(midnight + endMinute * MINUTE_MS), dayEnd);
    if (start < end) out.push({ start, end });
  }
}
