import type { WorkingHoursEntry } from "@sched/proto";
import { MINUTE_MS, addDays, type LocalDate, ZoneClock } from "@sched/time";
import { merge, tile, type Interval, type Piece, type SlotStatus } from "./intervals.js";
import { workingWindowsOn } from "./workingWindows.js";

export interface DaySlot {
  /** Local time of day, HH:MM. */
  start: string;
  /** Local time of day, HH:MM; "24:00" only for an end at the following midnight. */
  end: string;
  status: SlotStatus;
}

export interface DayView {
  date: LocalDate;
  timezone: string;
  slots: DaySlot[];
}

export interface DayViewInput {
  localDate: LocalDate;
  zone: string;
  workingHours: readonly WorkingHoursEntry[];
  /** Busy time in any order; overlapping and touching meetings merge. */
  busy: readonly Interval[];
}

/**
 * One person's day: each working window of the date (see workingWindowsOn) tiled
 * into alternating free and busy slots; time between two windows belongs to no slot.
 *
 * Busy time is widened to whole minutes (start down, end up) before tiling, so
 * that every slot is at least a minute long in HH:MM and no slot shows as
 * "10:00–10:00". Working-hours input ends at 23:59 at the latest, so an end at the
 * following midnight only arises when a skipped hour pushes an end past midnight;
 * windows are cut there and that end is written "24:00". Inside a repeated hour
 * two slots can show the same HH:MM: the format cannot tell the occurrences apart,
 * the order of the slots can.
 */
export function dayView(input: DayViewInput): DayView {
  const clock = ZoneClock.of(input.zone);
  const nextMidnight = clock.startOfDay(addDays(input.localDate, 1));
  const slots = dayPieces(input).map((piece) => ({
    start: localClockTime(piece.start, clock, nextMidnight),
    end: localClockTime(piece.end, clock, nextMidnight),
    status: piece.status,
  }));
  return { date: input.localDate, timezone: input.zone, slots };
}

/** The day view's slots as instants, in order. */
export function dayPieces(input: DayViewInput): Piece[] {
  const busy = merge(input.busy.map((b) => ({ start: floorToMinute(b.start), end: ceilToMinute(b.end) })));
  return workingWindowsOn(input.localDate, input.zone, input.workingHours).flatMap((window) => tile(window, busy));
}

/** HH:MM on the zone's clock; the following midnight itself is "24:00". */
export function localClockTime(instant: number, clock: ZoneClock, nextMidnight: number): string {
  if (instant === nextMidnight) return "24:00";
  const wall = new Date(clock.toWall(instant));
  return `${String(wall.getUTCHours()).padStart(2, "0")}:${String(wall.getUTCMinutes()).padStart(2, "0")}`;
}

function floorToMinute(ms: number): number {
  return Math.floor(ms / MINUTE_MS) * MINUTE_MS;
}

function ceilToMinute(ms: number): number {
  return Math.ceil(ms / MINUTE_MS) * MINUTE_MS;
}
