import { icsUtc, MAX_OCCURRENCES, MAX_SERIES_YEARS, occurrenceIdOf } from "@sched/proto";
import { floatingRule, instantOfWallClock, occurrenceInstants, occurrenceStarts, occurrenceStartTimes, readIcsUtc, type SeriesRule } from "@sched/time";
import { DateTime, IANAZone } from "luxon";

export { instantOfWallClock, occurrenceStarts, occurrenceStartTimes, type SeriesRule };

/**
 * Recurrence rules (api-decisions part 15), expanded by rrule-temporal.
 *
 * The rule is expanded in floating wall-clock time (DTSTART written as a UTC
 * wall clock, so the library sees no zone) and each wall-clock occurrence is
 * then placed in the organizer's zone by luxon. Two reasons (docs/recurrence.md
 * compares the libraries): with a TZID, rrule-temporal follows RFC 5545 3.3.10
 * literally and drops an occurrence whose local time a daylight-saving change
 * skips, where part 15 moves it forward by the gap; and placing the wall
 * clock ourselves lets an ambiguous time (the repeated hour in autumn) take
 * its first instant, as RFC 5545 3.3.5 says.
 */

const FREQS = ["DAILY", "WEEKLY", "MONTHLY", "YEARLY"] as const;
/** The order the normalized rule writes its parts in. */
const PART_ORDER = ["FREQ", "INTERVAL", "COUNT", "UNTIL", "BYMONTH", "BYMONTHDAY", "BYDAY", "BYSETPOS"] as const;
type Part = (typeof PART_ORDER)[number];

export type RuleResult = { ok: true; rule: string; occurrences: number; lastStart: Date } | { ok: false; problem: string };

const fail = (problem: string): RuleResult => ({ ok: false, problem });

function parseList(value: string, item: (v: string) => string | undefined): { values: string[] } | { problem: string } {
  const values = value.split(",");
  for (const v of values) {
    const problem = item(v);
    if (problem !== undefined) return { problem };
  }
  if (new Set(values).size !== values.length) return { problem: "repeats a value" };
  return { values };
}

const monthIn = (v: string) => (/^\d{1,2}$/.test(v) && Number(v) >= 1 && Number(v) <= 12 ? undefined : "must be months 1 to 12");
const signedIn = (max: number) => (v: string) => (/^[+-]?\d{1,3}$/.test(v) && Number(v) !== 0 && Math.abs(Number(v)) <= max ? undefined : `must be 1 to ${max} or -1 to -${max}`);

/**
 * Reads a rule strictly: only the parts of part 15, each once, with values
 * in range; FREQ first or not, `RRULE:` optional. Returns the parts by name
 * or the problem.
 */
function readParts(text: string): { parts: Map<Part, string> } | { problem: string } {
  const body = text.trim().replace(/^RRULE:/i, "");
  if (body === "") return { problem: "is empty" };
  const parts = new Map<Part, string>();
  for (const piece of body.split(";")) {
    const eq = piece.indexOf("=");
    if (eq <= 0) return { problem: `has a part without a value: ${JSON.stringify(piece)}` };
    const name = piece.slice(0, eq).toUpperCase();
    const value = piece.slice(eq + 1).toUpperCase();
    if (!(PART_ORDER as readonly string[]).includes(name)) return { problem: `has a part not supported: ${name} (supported: ${PART_ORDER.join(", ")})` };
    if (parts.has(name as Part)) return { problem: `gives ${name} twice` };
    if (value === "") return { problem: `has an empty ${name}` };
    parts.set(name as Part, value);
  }
  const freq = parts.get("FREQ");
  if (freq === undefined) return { problem: "needs FREQ" };
  if (!(FREQS as readonly string[]).includes(freq)) return { problem: `FREQ must be one of ${FREQS.join(", ")}` };
  if (parts.has("COUNT") && parts.has("UNTIL")) return { problem: "gives both COUNT and UNTIL" };
  if (!parts.has("COUNT") && !parts.has("UNTIL")) return { problem: `must end: give COUNT or UNTIL (at most ${MAX_OCCURRENCES} occurrences within ${MAX_SERIES_YEARS} years)` };
  const checks: [Part, (v: string) => string | undefined, boolean][] = [
    ["INTERVAL", (v) => (/^\d{1,3}$/.test(v) && Number(v) >= 1 ? undefined : "must be a whole number from 1 to 999"), false],
    ["COUNT", (v) => (/^\d{1,4}$/.test(v) && Number(v) >= 1 && Number(v) <= MAX_OCCURRENCES ? undefined : `must be a whole number from 1 to ${MAX_OCCURRENCES}`), false],
    ["UNTIL", (v) => (/^\d{8}(T\d{6}Z)?$/.test(v) ? undefined : "must be a date (YYYYMMDD) or a UTC datetime (YYYYMMDDTHHMMSSZ)"), false],
    ["BYMONTH", monthIn, true],
    ["BYMONTHDAY", signedIn(31), true],
    ["BYDAY", (v) => (/^([+-]?\d{1,2})?(MO|TU|WE|TH|FR|SA|SU)$/.test(v) && (v.length === 2 || (Number(v.slice(0, -2)) !== 0 && Math.abs(Number(v.slice(0, -2))) <= 53)) ? undefined : "must be weekdays such as MO or 1MO or -1FR"), true],
    ["BYSETPOS", signedIn(366), true],
  ];
  for (const [name, check, list] of checks) {
    const value = parts.get(name);
    if (value === undefined) continue;
    const read = list ? parseList(value, check) : { problem: check(value) };
    if ("problem" in read && read.problem !== undefined) return { problem: `${name} ${read.problem}` };
  }
  if (parts.has("BYSETPOS") && ![...parts.keys()].some((p) => p === "BYDAY" || p === "BYMONTHDAY" || p === "BYMONTH")) return { problem: "BYSETPOS needs BYDAY, BYMONTHDAY or BYMONTH to choose among" };
  const byDay = parts.get("BYDAY");
  if (byDay && /\d/.test(byDay) && (freq === "DAILY" || freq === "WEEKLY")) return { problem: `BYDAY with a number (such as -1FR) needs FREQ=MONTHLY or YEARLY` };
  if (parts.has("BYMONTHDAY") && freq === "WEEKLY") return { problem: "BYMONTHDAY does not go with FREQ=WEEKLY" };
  return { parts };
}

/** The rule as written back: parts in a fixed order, INTERVAL=1 left out, UNTIL as a UTC datetime. */
function normalize(parts: Map<Part, string>, until: Date | undefined): string {
  const out: string[] = [];
  for (const name of PART_ORDER) {
    const value = parts.get(name);
    if (value === undefined) continue;
    if (name === "INTERVAL" && Number(value) === 1) continue;
    if (name === "UNTIL") out.push(`UNTIL=${until ? icsUtc(until) : value}`);
    else if (name === "INTERVAL" || name === "COUNT") out.push(`${name}=${Number(value)}`);
    else out.push(`${name}=${value}`);
  }
  return out.join(";");
}

const YEAR_MS = 366 * 24 * 3_600_000;

/**
 * Checks a rule for a series starting at `start` in `zone` and normalizes
 * it. The series may have at most MAX_OCCURRENCES occurrences, all within
 * MAX_SERIES_YEARS of the start; the first occurrence is the start itself
 * (the rule must produce it, as calendar clients assume).
 */
export function checkRule(text: string, start: Date, zone: string): RuleResult {
  if (!IANAZone.isValidZone(zone)) return fail(`cannot be expanded: the time zone ${zone} is unknown`);
  const read = readParts(text);
  if ("problem" in read) return fail(read.problem);
  let until: Date | undefined;
  const untilText = read.parts.get("UNTIL");
  if (untilText !== undefined) {
    if (untilText.length === 8) {
      // A date: through that whole day on the organizer's clock.
      const day = DateTime.fromFormat(untilText, "yyyyMMdd", { zone });
      if (!day.isValid) return fail("UNTIL is not a date that exists");
      until = day.endOf("day").set({ millisecond: 0 }).toJSDate();
    } else {
      until = readIcsUtc(untilText);
      if (until === undefined) return fail("UNTIL is not a datetime that exists");
    }
    if (until.getTime() < start.getTime()) return fail("UNTIL is before startTime");
  }
  const rule = normalize(read.parts, until);
  let expanded: ReturnType<typeof floatingRule>;
  try {
    expanded = floatingRule(rule, start, zone);
  } catch (error) {
    return fail(`cannot be expanded: ${(error as Error).message}`);
  }
  const limit = start.getTime() + MAX_SERIES_YEARS * YEAR_MS;
  const instantOf = occurrenceInstants({ start, timeZone: zone });
  const starts = expanded.all((_, i) => i <= MAX_OCCURRENCES).map((z) => new Date(instantOf(z.epochMilliseconds)));
  if (starts.length === 0) return fail("gives no occurrence");
  if (starts.length > MAX_OCCURRENCES) return fail(`gives more than ${MAX_OCCURRENCES} occurrences`);
  if (starts[0]!.getTime() !== start.getTime()) return fail("must give startTime as its first occurrence (startTime is not on a day the rule names)");
  const lastStart = starts[starts.length - 1]!;
  const fiveYears = DateTime.fromJSDate(start, { zone }).plus({ years: MAX_SERIES_YEARS }).toMillis();
  if (lastStart.getTime() > Math.min(fiveYears, limit)) return fail(`runs longer than ${MAX_SERIES_YEARS} years`);
  return { ok: true, rule, occurrences: starts.length, lastStart };
}

/** Whether `start` is an original start the rule gives. */
export function isOccurrence(series: SeriesRule, start: Date): boolean {
  return occurrenceStarts(series, start, new Date(start.getTime() + 1_000)).some((s) => s.getTime() === start.getTime());
}

/** An occurrence's id: the series id and its original start (the contract's spelling). */
export const occurrenceId = occurrenceIdOf;

/** Splits an occurrence id; undefined for any other id. */
export function readOccurrenceId(id: string): { seriesId: string; originalStart: Date } | undefined {
  const at = id.lastIndexOf("_");
  if (at <= 0) return undefined;
  const originalStart = readIcsUtc(id.slice(at + 1));
  return originalStart ? { seriesId: id.slice(0, at), originalStart } : undefined;
}

