import * as chrono from "chrono-node";
import { DATE_RANGE_MESSAGE, isSupportedDate, WEEKDAYS, type Weekday } from "@sched/proto";
import { MINUTE_MS, addDays, daysInMonth, formatIsoDate, parseIsoDate, wallMidnight, weekdayOf, type LocalDate, ZoneClock } from "@sched/time";
import type { Interval } from "./intervals.js";

export type Parsed<T> = { ok: true; value: T } | { ok: false; param: string; message: string };

const MAX_QUERY_LENGTH = 64;
const MAX_DAYS_AHEAD = 3660;

const WEEKDAY_NAMES = new Map<string, Weekday>([
  ...WEEKDAYS.map((day) => [day, day] as const),
  ...WEEKDAYS.map((day) => [day.slice(0, 3), day] as const),
  ["tues", "tuesday"],
  ["weds", "wednesday"],
  ["thur", "thursday"],
  ["thurs", "thursday"],
]);

/**
 * The local date a `date` query names, read on the clock of `zone` at `now`
 * ("today" is the user's today, not UTC's). Case and surrounding blanks do not matter.
 *
 * - `YYYY-MM-DD`, strictly: impossible dates are refused, not rolled over.
 * - `today`, `tomorrow`, `yesterday`.
 * - `<weekday>` and `this <weekday>`: the first such day on or after today;
 *   `next <weekday>`: the first such day strictly after today. Weekdays may be
 *   abbreviated (`mon`, `tue`, `thurs` …).
 * - `in N days` (N ≤ 3660).
 * - Otherwise chrono-node's English parser, accepted only when it reads the whole
 *   input as one date whose day (or weekday) it is sure of and that carries no time
 *   of day: `March 5`, `5 March 2026`, `next week`, `in 2 weeks`, `last friday`,
 *   `the day after tomorrow`. Refused: ranges, times (`tomorrow 3pm`, `now`),
 *   vague spans (`next month`), text around a date.
 * - Input without a letter must be the strict ISO form: `03/04/2026`, `2026/3/5`
 *   or `20260305` are ambiguous or lenient and are refused.
 * - Whatever the form, the date must be a supported one (years 1970 to 9998).
 */
export function resolveDayQuery(input: string, zone: string, now: number): Parsed<LocalDate> {
  const resolved = resolveDate(input, zone, now);
  // A relative date can land outside the range too (`December 31 9999`).
  return resolved.ok && !isSupportedDate(resolved.value) ? { ok: false, param: "date", message: `date ${DATE_RANGE_MESSAGE}` } : resolved;
}

function resolveDate(input: string, zone: string, now: number): Parsed<LocalDate> {
  const refuse = (message: string): Parsed<LocalDate> => ({ ok: false, param: "date", message });
  const text = input.trim().toLowerCase().replace(/\s+/g, " ");
  if (text.length === 0) return refuse("date must not be empty");
  if (text.length > MAX_QUERY_LENGTH) return refuse("date is too long");
  const today = ZoneClock.of(zone).localDateOf(now);

  if (!/[a-z]/.test(text)) {
    const parts = parseIsoDate(text);
    return parts ? { ok: true, value: formatIsoDate(parts) } : refuse("date must be a calendar date YYYY-MM-DD or a relative expression such as today, tomorrow or next Monday");
  }
  if (text === "today") return { ok: true, value: today };
  if (text === "tomorrow") return { ok: true, value: addDays(today, 1) };
  if (text === "yesterday") return { ok: true, value: addDays(today, -1) };

  const weekday = /^(?:(this|next) )?([a-z]+)$/.exec(text);
  const named = weekday ? WEEKDAY_NAMES.get(weekday[2]!) : undefined;
  if (weekday && named) {
    const target = WEEKDAYS.indexOf(named);
    const current = WEEKDAYS.indexOf(weekdayOf(today));
    let ahead = (target - current + 7) % 7;
    if (weekday[1] === "next" && ahead === 0) ahead = 7;
    return { ok: true, value: addDays(today, ahead) };
  }

  const inDays = /^in (\d+) days?$/.exec(text);
  if (inDays) {
    const n = Number(inDays[1]);
    return n <= MAX_DAYS_AHEAD ? { ok: true, value: addDays(today, n) } : refuse(`date may be at most ${MAX_DAYS_AHEAD} days ahead`);
  }

  const fromChrono = readWithChrono(text, today);
  return fromChrono ? { ok: true, value: fromChrono } : refuse(`date "${input.trim().slice(0, MAX_QUERY_LENGTH)}" is not a date this service understands`);
}

function readWithChrono(text: string, today: LocalDate): LocalDate | null {
  // chrono computes on the process's own clock; a reference at local noon of the
  // user's today (built from wall-clock parts) makes its calendar the user's,
  // whatever zone the process runs in.
  const t = new Date(wallMidnight(today));
  const reference = new Date(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate(), 12, 0, 0, 0);
  const results = chrono.parse(text, reference);
  if (results.length !== 1) return null;
  const [result] = results;
  if (!result || result.index !== 0 || result.text.length !== text.length || result.end) return null;
  const start = result.start;
  if (start.isCertain("hour") || start.isCertain("minute") || start.isCertain("second")) return null;
  if (!start.isCertain("day") && !start.isCertain("weekday")) return null;
  const year = start.get("year");
  const month = start.get("month");
  const day = start.get("day");
  if (year === null || month === null || day === null) return null;
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  return formatIsoDate({ year, month, day });
}

// ---- recommendation horizon ------------------------------------------------

const DEFAULT_HORIZON_DAYS = 7;
const MAX_HORIZON_DAYS = 31;

const ISO_DATE_TIME = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(Z|[+-]\d{2}:\d{2})?$/;

type Bound = { kind: "date"; date: LocalDate } | { kind: "instant"; instant: number };

/**
 * The search horizon of a recommendation, [start, end) as instants.
 *
 * `from`/`to` are ISO dates (`2026-03-05`) or datetimes (`2026-03-05T09:30`,
 * seconds and milliseconds optional, `Z` or `±HH:MM` optional). A datetime without
 * an offset, and every date, is read on the user's clock (ZoneClock's rule for
 * skipped and repeated hours). A date `from` starts at that day's start; a date `to`
 * includes that whole day, so it ends at the next day's start.
 *
 * Defaults: `from` = now, `to` = 7 days after `from` on the user's clock.
 * Refused: unparseable or impossible values (no roll-over, no 24:00), `to` not after
 * `from`, and `to` later than 31 days after `from` — counted on the user's clock, so a
 * month with a daylight-saving change still allows 31 whole local days.
 */
export function parseHorizon(input: { from?: string | undefined; to?: string | undefined }, zone: string, now: number): Parsed<Interval> {
  const clock = ZoneClock.of(zone);
  let start = now;
  if (input.from !== undefined) {
    const from = parseBound(input.from);
    if (!from) return { ok: false, param: "from", message: "from must be an ISO 8601 date or datetime" };
    start = from.kind === "date" ? clock.startOfDay(from.date) : from.instant;
  }
  let end: number;
  if (input.to !== undefined) {
    const to = parseBound(input.to);
    if (!to) return { ok: false, param: "to", message: "to must be an ISO 8601 date or datetime" };
    end = to.kind === "date" ? clock.startOfDay(addDays(to.date, 1)) : to.instant;
  } else {
    end = plusLocalDays(clock, start, DEFAULT_HORIZON_DAYS);
  }
  if (end <= start) return { ok: false, param: "to", message: "to must be after from" };
  if (end > plusLocalDays(clock, start, MAX_HORIZON_DAYS)) {
    return { ok: false, param: "to", message: `the horizon from–to may span at most ${MAX_HORIZON_DAYS} days` };
  }
  return { ok: true, value: { start, end } };

  function parseBound(text: string): Bound | null {
    const date = parseIsoDate(text);
    if (date) return { kind: "date", date: formatIsoDate(date) };
    const m = ISO_DATE_TIME.exec(text);
    if (!m || !parseIsoDate(m[1]!)) return null;
    const hour = Number(m[2]);
    const minute = Number(m[3]);
    const second = m[4] === undefined ? 0 : Number(m[4]);
    const millis = m[5] === undefined ? 0 : Number(m[5].padEnd(3, "0"));
    if (hour > 23 || minute > 59 || second > 59) return null;
    const wall = wallMidnight(m[1]!) + ((hour * 60 + minute) * 60 + second) * 1000 + millis;
    const offset = m[6];
    if (offset === undefined) return { kind: "instant", instant: clock.fromWall(wall) };
    if (offset === "Z") return { kind: "instant", instant: wall };
    const offsetHours = Number(offset.slice(1, 3));
    const offsetMinutes = Number(offset.slice(4, 6));
    if (offsetHours > 14 || offsetMinutes > 59) return null;
    const sign = offset.startsWith("-") ? -1 : 1;
    return { kind: "instant", instant: wall - sign * (offsetHours * 60 + offsetMinutes) * MINUTE_MS };
  }
}

/** The same wall-clock reading `days` local days later (ZoneClock's rule if it falls in a gap or overlap). */
function plusLocalDays(clock: ZoneClock, instant: number, days: number): number {
  return clock.fromWall(clock.toWall(instant) + days * 24 * 60 * MINUTE_MS);
}
