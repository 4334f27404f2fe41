import { WEEKDAYS, type Weekday } from "@sched/proto";

/** A calendar date on someone's local clock, written YYYY-MM-DD. */
export type LocalDate = string;

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

export interface DateParts {
  year: number;
  month: number;
  day: number;
}

export function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** Strict YYYY-MM-DD: an impossible date (2026-02-30, 2026-13-01) is refused, never rolled over. */
export function parseIsoDate(text: string): DateParts | null {
  const m = ISO_DATE.exec(text);
  if (!m) return null;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  return { year, month, day };
}

export function isLocalDate(text: string): boolean {
  return parseIsoDate(text) !== null;
}

export function formatIsoDate({ year, month, day }: DateParts): LocalDate {
  return `${String(year).padStart(4, "0")}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`;
}

function requireDate(date: LocalDate): DateParts {
  const parts = parseIsoDate(date);
  if (!parts) throw new RangeError(`not a calendar date: ${date}`);
  return parts;
}

/**
 * The local midnight of a date as "wall-clock milliseconds": the epoch value the
 * same clock reading would have in UTC. Calendar arithmetic happens on these numbers,
 * which never see a time-zone rule; ZoneClock turns them into real instants.
 */
export function wallMidnight(date: LocalDate): number {
  const { year, month, day } = requireDate(date);
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  return d.getTime();
}

export function dateOfWall(wallMs: number): LocalDate {
  const d = new Date(wallMs);
  return formatIsoDate({ year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() });
}

export function addDays(date: LocalDate, days: number): LocalDate {
  return dateOfWall(wallMidnight(date) + days * DAY_MS);
}

/** Whole days from `from` to `to` (negative when `to` is earlier). */
export function daysBetween(from: LocalDate, to: LocalDate): number {
  return Math.round((wallMidnight(to) - wallMidnight(from)) / DAY_MS);
}

export function weekdayOf(date: LocalDate): Weekday {
  // getUTCDay: 0 = Sunday; WEEKDAYS starts on Monday.
  const sundayFirst = new Date(wallMidnight(date)).getUTCDay();
  return WEEKDAYS[(sundayFirst + 6) % 7]!;
}

/** "HH:MM" (00:00–23:59) as minutes after midnight, or null for anything else (24:00 included). */
export function parseLocalTime(text: string): number | null {
  const m = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(text);
  return m ? Number(m[1]) * 60 + Number(m[2]) : null;
}
