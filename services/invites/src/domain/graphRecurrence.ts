import { DateTime } from "luxon";

// Microsoft Graph's recurrence resources (patternedRecurrence, recurrencePattern, recurrenceRange), as Graph names their fields.
type GraphDayOfWeek = "sunday" | "monday" | "tuesday" | "wednesday" | "thursday" | "friday" | "saturday";
type GraphWeekIndex = "first" | "second" | "third" | "fourth" | "last";
interface GraphRecurrencePattern {
  type: "daily" | "weekly" | "absoluteMonthly" | "relativeMonthly" | "absoluteYearly" | "relativeYearly";
  interval: number;
  daysOfWeek?: GraphDayOfWeek[];
  dayOfMonth?: number;
  month?: number;
  index?: GraphWeekIndex;
  firstDayOfWeek?: GraphDayOfWeek;
}
interface GraphRecurrenceRange {
  type: "endDate" | "noEnd" | "numbered";
  startDate: string;
  endDate?: string;
  numberOfOccurrences?: number;
  recurrenceTimeZone: string;
}
export interface GraphPatternedRecurrence {
  pattern: GraphRecurrencePattern;
  range: GraphRecurrenceRange;
}

type GraphRecurrenceResult = { ok: true; recurrence: GraphPatternedRecurrence } | { ok: false; reason: string };

const DAYS: Readonly<Record<string, GraphDayOfWeek>> = { SU: "sunday", MO: "monday", TU: "tuesday", WE: "wednesday", TH: "thursday", FR: "friday", SA: "saturday" };
const INDEX: Readonly<Record<number, GraphWeekIndex>> = { 1: "first", 2: "second", 3: "third", 4: "fourth", [-1]: "last" };

const refuse = (reason: string): GraphRecurrenceResult => ({ ok: false, reason });

/**
 * A series' RFC 5545 rule (as the meetings service normalizes it: FREQ,
 * INTERVAL, COUNT or UNTIL, BYDAY, BYMONTHDAY, BYMONTH, BYSETPOS, WKST) as
 * Graph's patternedRecurrence, starting at the series' first start in its
 * zone; Graph expands it in `recurrenceTimeZone` at the event's local start
 * time, so the wall clock holds as in iCalendar. Graph has fewer shapes than
 * RFC 5545: a rule it cannot say (several months or month days, a
 * negative month day, a fifth or second-to-last weekday, a BYDAY with a
 * daily interval) is refused with the reason, for the caller to carry the
 * series another way. Graph has no EXDATE: cancelled occurrences are
 * cancelled as instances of the event.
 */
export function graphRecurrenceOf(rule: string, firstStart: string, timeZone: string): GraphRecurrenceResult {
  const parts = new Map<string, string>();
  for (const part of rule.replace(/^RRULE:/i, "").split(";")) {
    const [name, value] = part.split("=");
    if (!name || value === undefined) return refuse(`malformed rule part "${part}"`);
    parts.set(name.toUpperCase(), value.toUpperCase());
  }
  const start = DateTime.fromISO(firstStart, { zone: timeZone });
  if (!start.isValid) return refuse(`unknown time zone ${timeZone}`);
  const known = new Set(["FREQ", "INTERVAL", "COUNT", "UNTIL", "BYDAY", "BYMONTHDAY", "BYMONTH", "BYSETPOS", "WKST"]);
  const unknown = [...parts.keys()].find((k) => !known.has(k));
  if (unknown) return refuse(`Graph has no ${unknown}`);

  const interval = Number(parts.get("INTERVAL") ?? "1");
  const byDay = parts.get("BYDAY")?.split(",") ?? [];
  const byMonthDay = parts.get("BYMONTHDAY")?.split(",").map(Number) ?? [];
  const byMonth = parts.get("BYMONTH")?.split(",").map(Number) ?? [];
  const bySetPos = parts.get("BYSETPOS")?.split(",").map(Number) ?? [];
  const weekdays = byDay.map((d) => /^([+-]?\d{1,2})?(SU|MO|TU|WE|TH|FR|SA)$/.exec(d));
  if (weekdays.some((m) => !m)) return refuse(`malformed BYDAY ${byDay.join(",")}`);
  const days = weekdays.map((m) => DAYS[m![2]!]!);
  const ordinals = [...new Set(weekdays.map((m) => (m![1] ? Number(m![1]) : undefined)))];
  const startDay = DAYS[["MO", "TU", "WE", "TH", "FR", "SA", "SU"][start.weekday - 1]!]!;
  const firstDayOfWeek = DAYS[parts.get("WKST") ?? "MO"];
  if (!firstDayOfWeek) return refuse(`malformed WKST ${parts.get("WKST")}`);
  if (byMonth.length > 1) return refuse("Graph repeats in one month of the year only");
  if (byMonthDay.length > 1) return refuse("Graph repeats on one day of the month only");
  if (byMonthDay.some((d) => d < 1)) return refuse("Graph has no month day counted from the month's end");
  if (bySetPos.length > 1) return refuse("Graph takes one position in the month only");

  /** The week of the month a relative rule names (BYDAY=2TU, or BYDAY=TU;BYSETPOS=2). */
  const relativeIndex = (): GraphWeekIndex | string => {
    if (ordinals.length > 1 || (bySetPos.length > 0 && ordinals[0] !== undefined)) return "Graph has one week of the month for all the rule's days";
    const ordinal = bySetPos[0] ?? ordinals[0];
    if (ordinal === undefined) return "Graph has no rule on every such weekday of the month";
    return INDEX[ordinal] ?? `Graph has no week ${ordinal} of the month (first to fourth, or last)`;
  };

  let pattern: GraphRecurrencePattern;
  switch (parts.get("FREQ")) {
    case "DAILY":
      if (byMonthDay.length > 0 || byMonth.length > 0 || bySetPos.length > 0) return refuse("Graph's daily rule has no month days, months or positions");
      if (byDay.length === 0) pattern = { type: "daily", interval };
      else if (interval === 1 && ordinals.every((o) => o === undefined)) pattern = { type: "weekly", interval: 1, daysOfWeek: days, firstDayOfWeek };
      else return refuse("Graph has no daily rule on some weekdays every few days");
      break;
    case "WEEKLY":
      if (byMonthDay.length > 0 || byMonth.length > 0 || bySetPos.length > 0 || ordinals.some((o) => o !== undefined)) return refuse("Graph's weekly rule has weekdays only");
      pattern = { type: "weekly", interval, daysOfWeek: byDay.length > 0 ? days : [startDay], firstDayOfWeek };
      break;
    case "MONTHLY":
    case "YEARLY": {
      const yearly = parts.get("FREQ") === "YEARLY";
      if (!yearly && byMonth.length > 0) return refuse("Graph's monthly rule has no months");
      const month = yearly ? { month: byMonth[0] ?? start.month } : {};
      if (byDay.length > 0) {
        if (byMonthDay.length > 0) return refuse("Graph has no rule on both month days and weekdays");
        const index = relativeIndex();
        if (!["first", "second", "third", "fourth", "last"].includes(index)) return refuse(index);
        pattern = { type: yearly ? "relativeYearly" : "relativeMonthly", interval, daysOfWeek: days, index: index as GraphWeekIndex, ...month };
      } else {
        if (bySetPos.length > 0) return refuse("Graph has no position without weekdays");
        pattern = { type: yearly ? "absoluteYearly" : "absoluteMonthly", interval, dayOfMonth: byMonthDay[0] ?? start.day, ...month };
      }
      break;
    }
    default:
      return refuse(`Graph has no FREQ=${parts.get("FREQ") ?? "(none)"}`);
  }
  if (!Number.isInteger(interval) || interval < 1) return refuse(`malformed INTERVAL ${parts.get("INTERVAL")}`);

  const startDate = start.toISODate()!;
  const count = parts.get("COUNT");
  const until = parts.get("UNTIL");
  let range: GraphRecurrenceRange;
  if (count !== undefined) range = { type: "numbered", startDate, numberOfOccurrences: Number(count), recurrenceTimeZone: timeZone };
  else if (until !== undefined) {
    // UNTIL is an instant (or a date); Graph's endDate is the last local date the series may fall on.
    const end = /^\d{8}$/.test(until) ? DateTime.fromFormat(until, "yyyyMMdd", { zone: timeZone }) : DateTime.fromFormat(until, "yyyyMMdd'T'HHmmss'Z'", { zone: "UTC" }).setZone(timeZone);
    if (!end.isValid) return refuse(`malformed UNTIL ${until}`);
    range = { type: "endDate", startDate, endDate: end.toISODate()!, recurrenceTimeZone: timeZone };
  } else range = { type: "noEnd", startDate, recurrenceTimeZone: timeZone };
  return { ok: true, recurrence: { pattern, range } };
}
