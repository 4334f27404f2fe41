import { DateTime } from "luxon";
import { parseDateTime } from "./datetime.js";

export type PeriodResult = { ok: true; start: Date; end: Date } | { ok: false; param: string; problem: string };
type BoundResult = { ok: true; value: Date } | { ok: false; problem: string };

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAY_MS = 86_400_000;

/**
 * One end of a period the user names: a datetime as parseDateTime reads it
 * (without an offset, on the user's clock), or a date. A date that begins a
 * period is that day's start on the user's clock; one that ends it includes
 * that whole day, so it is the next day's start. A day's start is its first
 * instant, which on a day whose midnight a daylight-saving change skips is
 * the moment the clock jumps to.
 */
export function readBound(text: string, zone: string, role: "start" | "end"): BoundResult {
  const date = ISO_DATE.exec(text);
  if (!date) return parseDateTime(text, zone);
  const day = DateTime.fromObject({ year: Number(date[1]), month: Number(date[2]), day: Number(date[3]) }, { zone });
  if (!day.isValid || day.toISODate() !== text) return { ok: false, problem: "is not a date that exists" };
  return { ok: true, value: (role === "start" ? day : day.plus({ days: 1 })).startOf("day").toJSDate() };
}

/**
 * The instants [start, end) of a period given as two bounds (readBound),
 * named `startParam` and `endParam` in refusals: the end must come after the
 * start, and at most `maxDays` days (of 24 hours, plus one hour for a
 * daylight-saving change) later.
 */
export function readPeriod(
  bounds: { start: string; end: string },
  zone: string,
  names: { start: string; end: string },
  maxDays: number,
): PeriodResult {
  const start = readBound(bounds.start, zone, "start");
  if (!start.ok) return { ok: false, param: names.start, problem: start.problem };
  const end = readBound(bounds.end, zone, "end");
  if (!end.ok) return { ok: false, param: names.end, problem: end.problem };
  if (end.value.getTime() <= start.value.getTime()) return { ok: false, param: names.end, problem: `must be after ${names.start}` };
  if (end.value.getTime() - start.value.getTime() > maxDays * DAY_MS + DAY_MS / 24) {
    return { ok: false, param: names.end, problem: `may be at most ${maxDays} days after ${names.start}` };
  }
  return { ok: true, start: start.value, end: end.value };
}
