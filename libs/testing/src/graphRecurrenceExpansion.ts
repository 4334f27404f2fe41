import ICAL from "ical.js";
import { DateTime } from "luxon";

/** Graph's patternedRecurrence as a client sends it (fields as Graph names them). */
export interface GraphRecurrence {
  pattern: { type: string; interval?: number; daysOfWeek?: string[]; dayOfMonth?: number; month?: number; index?: string; firstDayOfWeek?: string };
  range: { type: string; startDate: string; endDate?: string; numberOfOccurrences?: number; recurrenceTimeZone?: string };
}

const DAY: Readonly<Record<string, string>> = { sunday: "SU", monday: "MO", tuesday: "TU", wednesday: "WE", thursday: "TH", friday: "FR", saturday: "SA" };
const POSITION: Readonly<Record<string, number>> = { first: 1, second: 2, third: 3, fourth: 4, last: -1 };

/** The RFC 5545 rule that says what a Graph pattern and range say; undefined for a shape Graph would refuse. */
export function ruleOfGraphRecurrence(recurrence: GraphRecurrence): string | undefined {
  const { pattern, range } = recurrence;
  const interval = pattern.interval ?? 1;
  if (!Number.isInteger(interval) || interval < 1) return undefined;
  const days = (pattern.daysOfWeek ?? []).map((d) => DAY[d.toLowerCase()]);
  if (days.some((d) => d === undefined)) return undefined;
  const byDay = days.length > 0 ? `;BYDAY=${days.join(",")}` : "";
  const position = pattern.index === undefined ? undefined : POSITION[pattern.index];
  let rule: string;
  switch (pattern.type) {
    case "daily":
      rule = `FREQ=DAILY;INTERVAL=${interval}`;
      break;
    case "weekly":
      if (days.length === 0) return undefined;
      rule = `FREQ=WEEKLY;INTERVAL=${interval}${byDay};WKST=${DAY[pattern.firstDayOfWeek?.toLowerCase() ?? "sunday"] ?? "SU"}`;
      break;
    case "absoluteMonthly":
      if (!pattern.dayOfMonth) return undefined;
      rule = `FREQ=MONTHLY;INTERVAL=${interval};BYMONTHDAY=${pattern.dayOfMonth}`;
      break;
    case "relativeMonthly":
      if (days.length === 0) return undefined;
      rule = `FREQ=MONTHLY;INTERVAL=${interval}${byDay};BYSETPOS=${position ?? 1}`;
      break;
    case "absoluteYearly":
      if (!pattern.dayOfMonth || !pattern.month) return undefined;
      rule = `FREQ=YEARLY;INTERVAL=${interval};BYMONTH=${pattern.month};BYMONTHDAY=${pattern.dayOfMonth}`;
      break;
    case "relativeYearly":
      if (days.length === 0 || !pattern.month) return undefined;
      rule = `FREQ=YEARLY;INTERVAL=${interval};BYMONTH=${pattern.month}${byDay};BYSETPOS=${position ?? 1}`;
      break;
    default:
      return undefined;
  }
  if (range.type === "numbered") {
    if (!range.numberOfOccurrences || range.numberOfOccurrences < 1) return undefined;
    return `${rule};COUNT=${range.numberOfOccurrences}`;
  }
  if (range.type === "endDate") {
    if (!range.endDate || !/^\d{4}-\d{2}-\d{2}$/.test(range.endDate)) return undefined;
    // The last local date an occurrence may fall on, whole.
    return `${rule};UNTIL=${range.endDate.replaceAll("-", "")}T235959`;
  }
  return range.type === "noEnd" ? rule : undefined;
}

/**
 * The original starts (epoch ms) of a recurring event's occurrences before
 * `until`, in order: the pattern expanded by ical.js from the range's start
 * date at the event's local start time, as floating wall-clock times, each
 * placed in the recurrence's zone by luxon (a time a daylight-saving change
 * skips moves forward by the gap, as Exchange does).
 */
export function originalStarts(recurrence: GraphRecurrence, localStart: DateTime, until: number, most = 2_000): number[] {
  const rule = ruleOfGraphRecurrence(recurrence);
  if (!rule) return [];
  const zone = recurrence.range.recurrenceTimeZone ?? localStart.zoneName ?? "UTC";
  const at = localStart.setZone(zone);
  const [year, month, day] = recurrence.range.startDate.split("-").map(Number) as [number, number, number];
  const dtstart = ICAL.Time.fromData({ year, month, day, hour: at.hour, minute: at.minute, second: at.second, isDate: false });
  const iterator = ICAL.Recur.fromString(rule).iterator(dtstart);
  const starts: number[] = [];
  for (let next = iterator.next(); next && starts.length < most; next = iterator.next()) {
    const ms = DateTime.fromObject({ year: next.year, month: next.month, day: next.day, hour: next.hour, minute: next.minute, second: next.second }, { zone }).toMillis();
    if (ms >= until) break;
    starts.push(ms);
  }
  return starts;
}
