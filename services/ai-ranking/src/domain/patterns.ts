import { ZoneReader } from "./localTime.js";

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

/**
 * Learns a person's patterns from their confirmed meetings, read on their
 * clock. Order of `meetings` does not matter; an empty history gives empty
 * patterns (zero meetings), which ranking treats as knowing nothing.
 */
export function learnPatterns(meetings: readonly HistoryMeeting[], zone: string): Patterns {
  const clock = ZoneReader.of(zone);
  const hourly = new Array<number>(HOURS_A_WEEK).fill(0);
  const perDay = new Map<number, HistoryMeeting[]>();
  const durations = new Map<number, number>();
  const leads: number[] = [];
  for (const m of meetings) {
    const local = clock.read(m.start);
    hourly[local.weekday * 24 + Math.floor(local.minuteOfDay / 60)]! += 1;
    const day = perDay.get(local.dayNumber);
    if (day) day.push(m);
    else perDay.set(local.dayNumber, [m]);
    durations.set(m.durationMinutes, (durations.get(m.durationMinutes) ?? 0) + 1);
    if (m.start > m.scheduledAt) leads.push((m.start - m.scheduledAt) / 86_400_000);
  }

  const loads: number[] = [];
  const gaps: number[] = [];
  const byWeekday = new Array<number>(7).fill(0);
  for (let i = 0; i < HOURS_A_WEEK; i++) byWeekday[Math.floor(i / 24)]! += hourly[i]!;
  for (const day of perDay.values()) {
    loads.push(day.length);
    day.sort((a, b) => a.start - b.start);
    for (let i = 1; i < day.length; i++) {
      const previousEnd = day[i - 1]!.start + day[i - 1]!.durationMinutes * 60_000;
      gaps.push(Math.max(0, (day[i]!.start - previousEnd) / 60_000));
    }
  }

  let usualDurationMinutes = 30;
  let most = 0;
  for (const [minutes, count] of durations) {
    if (count > most || (count === most && minutes < usualDurationMinutes)) {
      usualDurationMinutes = minutes;
      most = count;
    }
  }

  const known = meetings.length >= MEETINGS_TO_JUDGE_HABITS;
  const backToBack = gaps.filter((g) => g <= BACK_TO_BACK_MINUTES).length;
  const clustering = !known ? null : gaps.length < PAIRS_TO_JUDGE_CLUSTERING ? 0 : backToBack / gaps.length;
  const workingDaysMet = byWeekday.slice(0, 5).filter((n) => n > 0).length;
  const days = [...perDay.keys()];
  const weeksSpanned = days.length ? (Math.max(...days) - Math.min(...days)) / 7 : 0;
  // An empty weekday over many weeks of meeting on the others is a habit; over a few weeks, or among several empty ones, chance.
  const avoidedWeekdays = known && workingDaysMet >= 3 && weeksSpanned >= AVOIDANCE_WEEKS ? [0, 1, 2, 3, 4].filter((d) => byWeekday[d] === 0) : [];

  return {
    meetings: meetings.length,
    hourly,
    dailyLoad: { usual: quantile(loads, 0.5) ?? 0, busy: quantile(loads, 0.9) ?? 0 },
    usualDurationMinutes,
    usualGapMinutes: quantile(gaps, 0.2),
    usualLeadDays: quantile(leads, 0.5),
    clustering,
    avoidedWeekdays,
  };
}

/** The nearest-rank quantile, rounded to a whole number for counts and minutes alike; null for no values. */
function quantile(values: number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!);
}

export const NO_PATTERNS: Patterns = learnPatterns([], "UTC");
