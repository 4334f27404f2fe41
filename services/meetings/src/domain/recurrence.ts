import { icsUtc, MAX_OCCURRENCES, MAX_SERIES_YEARS, occurrenceIdOf } from "@sched/proto";
import { DateTime, IANAZone } from "luxon";
import { RRuleTemporal } from "rrule-temporal";

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

/** A rule as stored with its series: the normalized text and the zone its wall clock is read in. */
export interface SeriesRule {
  /** Normalized RRULE value, without `RRULE:`. */
  rule: string;
  timeZone: string;
  /** The first occurrence's start (DTSTART). */
  start: Date;
  /** When known, the last occurrence's end: no block past it is expanded. */
  lastEnd?: Date;
}

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

/** Reads `YYYYMMDDTHHMMSSZ` back; undefined when it is not that. */
function readIcsUtc(text: string): Date | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text);
  // Years before 1900 name no occurrence (and some, such as 0000, no date Postgres keeps).
  if (!m || Number(m[1]) < 1900) return undefined;
  const date = new Date(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}Z`);
  return Number.isNaN(date.getTime()) || icsUtc(date) !== text ? undefined : date;
}

/** The wall clock of an instant in a zone, as a floating (UTC-fielded) instant. */
function floatingOf(instant: Date, zone: string): number {
  const local = DateTime.fromJSDate(instant, { zone });
  return Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second);
}

/**
 * Offsets by zone and quarter hour: the zones' rules in use change offsets only
 * on quarter hours (a historical change at an odd minute would be placed up to
 * 15 minutes off).
 */
const offsets = new Map<string, Map<number, number>>();
const QUARTER_MS = 15 * 60_000;
const MOST_OFFSETS = 200_000;
let offsetCount = 0;

/** The zone's UTC offset in minutes at an instant (luxon's zone data, kept by quarter hour). */
function offsetAt(zone: string, instant: number): number {
  let byQuarter = offsets.get(zone);
  if (byQuarter === undefined) offsets.set(zone, (byQuarter = new Map()));
  const quarter = Math.floor(instant / QUARTER_MS);
  let offset = byQuarter.get(quarter);
  if (offset === undefined) {
    if (offsetCount >= MOST_OFFSETS) {
      offsets.clear();
      offsetCount = 0;
      offsets.set(zone, byQuarter);
    }
    offset = IANAZone.create(zone).offset(quarter * QUARTER_MS);
    byQuarter.set(quarter, offset);
    offsetCount++;
  }
  return offset;
}

/**
 * The instant of a wall-clock time in a zone, as RFC 5545 3.3.5 reads it
 * (and Temporal's "compatible" disambiguation): a time that happens twice is
 * its first instant; a time skipped by a daylight-saving change is read with
 * the offset before the gap, which moves it forward by the gap. The offsets
 * are luxon's; only the choice between the two around the time is made here.
 */
export function instantOfWallClock(floating: number, zone: string): Date {
  const before = offsetAt(zone, floating - 86_400_000);
  const after = offsetAt(zone, floating + 86_400_000);
  const withBefore = floating - before * 60_000;
  const withAfter = floating - after * 60_000;
  const beforeHolds = offsetAt(zone, withBefore) === before;
  const afterHolds = offsetAt(zone, withAfter) === after;
  if (beforeHolds && afterHolds) return new Date(Math.min(withBefore, withAfter));
  if (beforeHolds) return new Date(withBefore);
  if (afterHolds) return new Date(withAfter);
  return new Date(withBefore);
}

const YEAR_MS = 366 * 24 * 3_600_000;

/** Built rules, by their text, start and zone: parsing a rule costs far more than expanding a window of it. */
const built = new Map<string, RRuleTemporal>();
const MOST_BUILT = 5_000;

function floatingRule(rule: string, start: Date, zone: string): RRuleTemporal {
  const key = `${rule}|${start.getTime()}|${zone}`;
  let r = built.get(key);
  if (r === undefined) {
    const dtstart = icsUtc(new Date(floatingOf(start, zone)));
    // UNTIL is an instant: as a floating time it is the wall clock it shows in the zone.
    const floatingRuleText = rule.replace(/UNTIL=(\d{8}T\d{6}Z)/, (_, u: string) => `UNTIL=${icsUtc(new Date(floatingOf(readIcsUtc(u)!, zone)))}`);
    r = new RRuleTemporal({ rruleString: `DTSTART:${dtstart}\nRRULE:${floatingRuleText}`, cache: false });
    if (built.size >= MOST_BUILT) built.delete(built.keys().next().value!);
    built.set(key, r);
  }
  return r;
}

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
  let expanded: RRuleTemporal;
  try {
    expanded = floatingRule(rule, start, zone);
  } catch (error) {
    return fail(`cannot be expanded: ${(error as Error).message}`);
  }
  const limit = start.getTime() + MAX_SERIES_YEARS * YEAR_MS;
  const starts = expanded.all((_, i) => i <= MAX_OCCURRENCES).map((z) => instantOfWallClock(z.epochMilliseconds, zone));
  if (starts.length === 0) return fail("gives no occurrence");
  if (starts.length > MAX_OCCURRENCES) return fail(`gives more than ${MAX_OCCURRENCES} occurrences`);
  if (starts[0]!.getTime() !== start.getTime()) return fail("must give startTime as its first occurrence (startTime is not on a day the rule names)");
  const lastStart = starts[starts.length - 1]!;
  const fiveYears = DateTime.fromJSDate(start, { zone }).plus({ years: MAX_SERIES_YEARS }).toMillis();
  if (lastStart.getTime() > Math.min(fiveYears, limit)) return fail(`runs longer than ${MAX_SERIES_YEARS} years`);
  return { ok: true, rule, occurrences: starts.length, lastStart };
}

/** Most a zone's offset differs from UTC (UTC−12 to UTC+14), as a margin around a floating window. */
const WIDEST_OFFSET_MS = 14 * 3_600_000;

/** Series are expanded in blocks of four weeks, each kept once expanded: a window reads the blocks it touches. */
const BLOCK_MS = 28 * 86_400_000;
const blocks = new Map<string, readonly number[]>();
const MOST_BLOCKS = 100_000;

/** The original starts (epoch ms) of the occurrences starting within one block. */
function blockStarts(series: SeriesRule, block: number): readonly number[] {
  const key = `${series.rule}|${series.start.getTime()}|${series.timeZone}|${block}`;
  let starts = blocks.get(key);
  if (starts === undefined) {
    const from = block * BLOCK_MS;
    const to = from + BLOCK_MS;
    const r = floatingRule(series.rule, series.start, series.timeZone);
    const lo = new Date(from - WIDEST_OFFSET_MS - 3_600_000);
    const hi = new Date(to + WIDEST_OFFSET_MS + 3_600_000);
    starts = r
      .between(lo, hi, true)
      .map((z) => instantOfWallClock(z.epochMilliseconds, series.timeZone).getTime())
      .filter((t) => t >= from && t < to);
    if (blocks.size >= MOST_BLOCKS) blocks.delete(blocks.keys().next().value!);
    blocks.set(key, starts);
  }
  return starts;
}

/**
 * The original starts of a series' occurrences that start in [from, to),
 * in order. Only the four-week blocks the window touches are expanded
 * (rrule-temporal's `between`), never the whole series.
 */
export function occurrenceStarts(series: SeriesRule, from: Date, to: Date): Date[] {
  if (to.getTime() <= from.getTime()) return [];
  const lo = Math.max(from.getTime(), series.start.getTime());
  const hi = Math.min(to.getTime(), series.lastEnd?.getTime() ?? Infinity);
  if (lo >= hi) return [];
  const out: Date[] = [];
  for (let block = Math.floor(lo / BLOCK_MS); block * BLOCK_MS < hi; block++) {
    for (const t of blockStarts(series, block)) if (t >= lo && t < hi) out.push(new Date(t));
  }
  return out;
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

