import { icsUtc } from "@sched/proto";
import { DateTime, IANAZone } from "luxon";
import { RRuleTemporal } from "rrule-temporal";

/**
 * Expanding recurrence rules (RFC 5545 RRULE) in a zone, as the meetings
 * service stores them (docs/recurrence.md): the rule is expanded by
 * rrule-temporal in floating wall-clock time and each wall-clock occurrence
 * is placed in the zone by luxon, so an occurrence in a skipped hour moves
 * forward by the gap and one in a repeated hour takes its first instant.
 * Shared by every service that reads series from their events.
 */

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

/** Reads `YYYYMMDDTHHMMSSZ` back; undefined when it is not that. */
export function readIcsUtc(text: string): Date | undefined {
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

/**
 * The instants of a series' occurrences from their wall clocks (epoch ms as
 * floating times): each as instantOfWallClock gives it, but for the one at
 * the start's own wall clock, which is the start itself. A start given in
 * the second pass of an hour the clocks go back over is that instant, where
 * instantOfWallClock takes the first pass (as RFC 5545 does for a wall clock
 * that occurs twice): without this the series' first occurrence would not
 * be its start.
 */
export function occurrenceInstants(series: Pick<SeriesRule, "start" | "timeZone">): (floating: number) => number {
  const startFloating = floatingOf(series.start, series.timeZone);
  const start = series.start.getTime();
  return (floating) => (floating === startFloating ? start : instantOfWallClock(floating, series.timeZone).getTime());
}

/** Built rules, by their text, start and zone: parsing a rule costs far more than expanding a window of it. */
const built = new Map<string, RRuleTemporal>();
const MOST_BUILT = 5_000;

/** The rule as rrule-temporal expands it, in floating time (kept once built). */
export function floatingRule(rule: string, start: Date, zone: string): RRuleTemporal {
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

/** Most a zone's offset differs from UTC (UTC−12 to UTC+14), as a margin around a floating window. */
const WIDEST_OFFSET_MS = 14 * 3_600_000;

/** Series are expanded in blocks of four weeks, each kept once expanded: a window reads the blocks it touches. */
const BLOCK_MS = 28 * 86_400_000;
const blocks = new Map<string, readonly number[]>();
const MOST_BLOCKS = 100_000;

/**
 * The blocks a rule object has read, by block number: a rule kept by its
 * caller (as a kept series keeps its own) finds them again without building
 * and hashing the text key of `blocks`. They go with the rule object.
 */
const blocksOfRule = new WeakMap<SeriesRule, Map<number, readonly number[]>>();

/** The original starts (epoch ms) of the occurrences starting within one block. */
function blockStarts(series: SeriesRule, block: number): readonly number[] {
  let own = blocksOfRule.get(series);
  const known = own?.get(block);
  if (known !== undefined) return known;
  const key = `${series.rule}|${series.start.getTime()}|${series.timeZone}|${block}`;
  let starts = blocks.get(key);
  if (starts === undefined) {
    const from = block * BLOCK_MS;
    const to = from + BLOCK_MS;
    const r = floatingRule(series.rule, series.start, series.timeZone);
    const lo = new Date(from - WIDEST_OFFSET_MS - 3_600_000);
    const hi = new Date(to + WIDEST_OFFSET_MS + 3_600_000);
    const instantOf = occurrenceInstants(series);
    starts = r
      .between(lo, hi, true)
      .map((z) => instantOf(z.epochMilliseconds))
      .filter((t) => t >= from && t < to);
    if (blocks.size >= MOST_BLOCKS) blocks.delete(blocks.keys().next().value!);
    blocks.set(key, starts);
  }
  if (!own) blocksOfRule.set(series, (own = new Map()));
  own.set(block, starts);
  return starts;
}

/**
 * The original starts of a series' occurrences that start in [from, to),
 * in order. Only the four-week blocks the window touches are expanded
 * (rrule-temporal's `between`), never the whole series.
 */
export function occurrenceStarts(series: SeriesRule, from: Date, to: Date): Date[] {
  return occurrenceStartTimes(series, from.getTime(), to.getTime()).map((t) => new Date(t));
}

/** occurrenceStarts as epoch milliseconds, for callers that compare before they build anything. */
export function occurrenceStartTimes(series: SeriesRule, from: number, to: number): number[] {
  if (to <= from) return [];
  const lo = Math.max(from, series.start.getTime());
  const hi = Math.min(to, series.lastEnd?.getTime() ?? Infinity);
  if (lo >= hi) return [];
  const out: number[] = [];
  for (let block = Math.floor(lo / BLOCK_MS); block * BLOCK_MS < hi; block++) {
    for (const t of blockStarts(series, block)) if (t >= lo && t < hi) out.push(t);
  }
  return out;
}
