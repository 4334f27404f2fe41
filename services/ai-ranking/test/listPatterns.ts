import { ZoneReader } from "../src/domain/localTime.js";
import { HOURS_A_WEEK, type HistoryMeeting, type Patterns } from "../src/domain/patterns.js";

// learnPatterns as it was before it summed day tallies: every list of values
// kept and sorted. The tallies must learn exactly what it learns. Its only
// change: meetings starting together are taken shorter first, as they are now
// (before, the order rows came in decided).

const BACK_TO_BACK_MINUTES = 10;
const MEETINGS_TO_JUDGE_HABITS = 10;
const PAIRS_TO_JUDGE_CLUSTERING = 3;
const AVOIDANCE_WEEKS = 6;

export function learnPatternsByList(meetings: readonly HistoryMeeting[], zone: string): Patterns {
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
    day.sort((a, b) => a.start - b.start || a.durationMinutes - b.durationMinutes);
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

