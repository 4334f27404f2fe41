import { ZoneReader } from "./localTime.js";
import { bump, countOf, emptyTally, quantileOf, sumTallies, totalOf, type Tally } from "./tally.js";

/** One meeting of a person's history, as ai-ranking keeps it. */
export interface HistoryMeeting {
  start: number;
  durationMinutes: number;
  /** When it was put in the calendar (the meeting's creation). */
  scheduledAt: number;
}

/** What a person's history says about when they meet; all local times on their own clock. */
export interface Patterns {
  /** Meetings learned from. */
  meetings: number;
  /** Meetings starting in each hour of each weekday: index weekday × 24 + hour, Monday = 0. */
  hourly: number[];
  /** Meetings on a day they meet at all: the usual (median) and a busy (90th percentile) day. */
  dailyLoad: { usual: number; busy: number };
  /** The most common length, in minutes. */
  usualDurationMinutes: number;
  /**
   * The free time they seldom go below between consecutive meetings of one day
   * (20th percentile), in minutes; null with no such pair. The median would
   * describe how their days happen to fall, not the room they insist on.
   */
  usualGapMinutes: number | null;
  /** Median days from scheduling a meeting to its start (never negative); null with none scheduled ahead. */
  usualLeadDays: number | null;
  /**
   * [0, 1]: how much they cluster their meetings rather than spread them: the
   * share of a day's later meetings that start within BACK_TO_BACK_MINUTES of
   * the one before, 0 for someone whose meeting days seldom hold two. Null
   * with too little history to say (patterns stored before it was learned
   * read as null too).
   */
  clustering: number | null;
  /** Working weekdays (0 = Monday … 4 = Friday) they never meet on although they meet on the others; empty when too little is known. */
  avoidedWeekdays: number[];
}

/** Two meetings this close (end to start) are back to back; a 15-minute buffer is already room. */
const BACK_TO_BACK_MINUTES = 10;
/** Fewer meetings than this say nothing about clustering or avoided days. */
const MEETINGS_TO_JUDGE_HABITS = 10;
/** Fewer same-day pairs than this: their days seldom hold two meetings, so they spread. */
const PAIRS_TO_JUDGE_CLUSTERING = 3;
/** A weekday without meetings over this many weeks of history is avoided. */
const AVOIDANCE_WEEKS = 6;

export const HOURS_A_WEEK = 7 * 24;

/** Meetings further back than this say little about today's habits. */
export const HISTORY_DAYS = 180;

/** The first and last local day (day numbers) holding a meeting; null with none. */
export interface DaySpan {
  first: number;
  last: number;
}

/**
 * Learns a person's patterns from their confirmed meetings, read on their
 * clock. Order of `meetings` does not matter; an empty history gives empty
 * patterns (zero meetings), which ranking treats as knowing nothing.
 */
export function learnPatterns(meetings: readonly HistoryMeeting[], zone: string): Patterns {
  const days = tallyDays(meetings, zone);
  return patternsOf(sumTallies(days.values()), spanOf(days.keys()));
}

export function spanOf(days: Iterable<number>): DaySpan | null {
  let span: DaySpan | null = null;
  for (const d of days) span = span ? { first: Math.min(span.first, d), last: Math.max(span.last, d) } : { first: d, last: d };
  return span;
}

/** Each local day's tally of these meetings, by day number on the zone's clock. */
export function tallyDays(meetings: readonly HistoryMeeting[], zone: string): Map<number, Tally> {
  const clock = ZoneReader.of(zone);
  const perDay = new Map<number, HistoryMeeting[]>();
  for (const m of meetings) {
    const day = clock.read(m.start).dayNumber;
    const held = perDay.get(day);
    if (held) held.push(m);
    else perDay.set(day, [m]);
  }
  return new Map([...perDay].map(([day, held]) => [day, tallyDay(held, clock)]));
}

/** What one local day's meetings add to a person's tally. */
function tallyDay(meetings: HistoryMeeting[], clock: ZoneReader): Tally {
  const tally = emptyTally();
  // Meetings starting together are taken shorter first, so the gap after them never hangs on the order rows came in.
  const day = [...meetings].sort((a, b) => a.start - b.start || a.durationMinutes - b.durationMinutes);
  for (let i = 0; i < day.length; i++) {
    const m = day[i]!;
    const local = clock.read(m.start);
    bump(tally.hourly, local.weekday * 24 + Math.floor(local.minuteOfDay / 60));
    bump(tally.durations, m.durationMinutes);
    if (m.start > m.scheduledAt) bump(tally.leadDays, Math.round((m.start - m.scheduledAt) / 86_400_000));
    if (i === 0) continue;
    const previousEnd = day[i - 1]!.start + day[i - 1]!.durationMinutes * 60_000;
    const gap = Math.max(0, (m.start - previousEnd) / 60_000);
    bump(tally.gaps, Math.round(gap));
    if (gap <= BACK_TO_BACK_MINUTES) tally.backToBack++;
  }
  tally.meetings = day.length;
  if (day.length > 0) bump(tally.loads, day.length);
  return tally;
}

/** The patterns a tally says, given the span of days it covers. */
export function patternsOf(tally: Tally, span: DaySpan | null): Patterns {
  const hourly = new Array<number>(HOURS_A_WEEK).fill(0);
  for (let i = 0; i < HOURS_A_WEEK; i++) hourly[i] = countOf(tally.hourly, i);
  const byWeekday = new Array<number>(7).fill(0);
  for (let i = 0; i < HOURS_A_WEEK; i++) byWeekday[Math.floor(i / 24)]! += hourly[i]!;

  let usualDurationMinutes = 30;
  let most = 0;
  for (const [key, count] of Object.entries(tally.durations)) {
    const minutes = Number(key);
    if (count > most || (count === most && minutes < usualDurationMinutes)) {
      usualDurationMinutes = minutes;
      most = count;
    }
  }

  const known = tally.meetings >= MEETINGS_TO_JUDGE_HABITS;
  const gapCount = totalOf(tally.gaps);
  const clustering = !known ? null : gapCount < PAIRS_TO_JUDGE_CLUSTERING ? 0 : tally.backToBack / gapCount;
  const workingDaysMet = byWeekday.slice(0, 5).filter((n) => n > 0).length;
  const weeksSpanned = span ? (span.last - span.first) / 7 : 0;
  // An empty weekday over many weeks of meeting on the others is a habit; over a few weeks, or among several empty ones, chance.
  const avoidedWeekdays = known && workingDaysMet >= 3 && weeksSpanned >= AVOIDANCE_WEEKS ? [0, 1, 2, 3, 4].filter((d) => byWeekday[d] === 0) : [];

  return {
    meetings: tally.meetings,
    hourly,
    dailyLoad: { usual: quantileOf(tally.loads, 0.5) ?? 0, busy: quantileOf(tally.loads, 0.9) ?? 0 },
    usualDurationMinutes,
    usualGapMinutes: quantileOf(tally.gaps, 0.2),
    usualLeadDays: quantileOf(tally.leadDays, 0.5),
    clustering,
    avoidedWeekdays,
  };
}

export const NO_PATTERNS: Patterns = learnPatterns([], "UTC");
