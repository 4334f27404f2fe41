import { AppError } from "@sched/errors";
import { IANAZone } from "luxon";

const EXTENDED_ISO = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(Z|([+-])(\d{2})(?::?(\d{2}))?)?$/;

export type DateTimeResult = { ok: true; value: Date } | { ok: false; problem: string };

/**
 * Reads an ISO 8601 datetime in extended form (`2026-05-04T09:30`, seconds,
 * fractions, `Z` or an offset optional). Without an offset it is a wall-clock
 * time in `zone`. Nothing rolls over: day 30 of February, hour 24, minute 60
 * and a wall-clock time skipped by a daylight-saving change are refused.
 * Fractions of a second are dropped. Which years may be given is the
 * contract's rule (DateTimeInput).
 */
export function parseDateTime(input: string, zone: string): DateTimeResult {
  const m = EXTENDED_ISO.exec(input);
  if (!m) return { ok: false, problem: "must be an ISO 8601 datetime such as 2026-05-04T09:30:00Z" };
  const [year, month, day, hour, minute] = [m[1], m[2], m[3], m[4], m[5]].map(Number) as [number, number, number, number, number];
  const second = m[6] === undefined ? 0 : Number(m[6]);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return { ok: false, problem: "is not a date that exists" };
  if (hour > 23 || minute > 59 || second > 59) return { ok: false, problem: "is not a time of day that exists" };

  let instant: number;
  if (m[8] !== undefined) {
    const offsetMinutes = m[8] === "Z" ? 0 : (m[9] === "-" ? -1 : 1) * (Number(m[10]) * 60 + Number(m[11] ?? 0));
    if (Math.abs(offsetMinutes) > 18 * 60 || Number(m[11] ?? 0) > 59) return { ok: false, problem: "has an offset out of range" };
    instant = wallClock(year, month, day, hour, minute, second) - offsetMinutes * 60_000;
  } else {
    const named = IANAZone.isValidZone(zone) ? zone : "UTC";
    const found = wallClockIn(IANAZone.create(named), wallClock(year, month, day, hour, minute, second));
    // A wall-clock time skipped by a daylight-saving change does not exist; moving it silently would move the meeting.
    if (found === undefined) return { ok: false, problem: `does not exist in time zone ${named} (skipped by a daylight-saving change)` };
    instant = found;
  }
  // Fractions of a second (group 7) are dropped: the instant is already whole seconds.
  return { ok: true, value: new Date(instant) };
}

/** parseDateTime, failing as the 400 that names the field. */
export function readDateTime(input: string, zone: string, param: string): Date {
  const result = parseDateTime(input, zone);
  if (!result.ok) throw new AppError("invalid_request", `Invalid ${param}: ${result.problem}.`, { param });
  return result.value;
}

/** The wall-clock fields as milliseconds since the epoch, read as if in UTC (years below 100 included). */
function wallClock(year: number, month: number, day: number, hour: number, minute: number, second: number): number {
  const d = new Date(Date.UTC(2000, month - 1, day, hour, minute, second));
  d.setUTCFullYear(year);
  return d.getTime();
}

/**
 * The instant a wall-clock time names in a zone: of the offsets in force
 * around it, those that map back to the same wall clock. None means the time
 * was skipped; two mean it occurs twice, and the earlier instant is taken.
 */
function wallClockIn(zone: IANAZone, local: number): number | undefined {
  const DAY = 86_400_000;
  const offsets = new Set([zone.offset(local - DAY), zone.offset(local), zone.offset(local + DAY)]);
  const instants = [...offsets].map((o) => local - o * 60_000).filter((t) => zone.offset(t) * 60_000 === local - t);
  return instants.length === 0 ? undefined : Math.min(...instants);
}

function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
}
