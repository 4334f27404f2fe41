import { WEEKDAYS, type Preferences } from "@sched/proto";
import { ZoneReader, type LocalMoment } from "./localTime.js";
import { HOURS_A_WEEK, type Patterns } from "./patterns.js";

export interface Interval {
  start: number;
  end: number;
}

/** One counted person as the ranker sees them. */
export interface RankedPerson {
  userId: string;
  /** How reasons name them. */
  name: string;
  isCaller: boolean;
  zone: string;
  patterns: Patterns;
  preferences: Preferences;
  /** Their confirmed meetings around the candidates, in any order. */
  meetings: readonly Interval[];
}

/** A candidate as the ranker gets it. */
export interface Candidate extends Interval {
  /** The asker's own score, its spread over days included; null when it sent none. */
  heuristicScore: number | null;
  /** userIds of the people whose working hours hold the whole slot; null when the asker did not say. */
  withinWorkingHours: ReadonlySet<string> | null;
}

/** A stated preferred time as reasons name it. */
export interface StatedWindow {
  start: string;
  end: string;
  days: readonly string[] | null;
}

/** How well one candidate suits one person, and why. */
export interface PersonFit {
  /** [0, 1]: how much of their history stands behind the learned part; the rest follows the asker's heuristic. */
  knowledge: number;
  /** [0, 1]: how usual this weekday and hour are for them; 0.5 when their history says nothing. */
  habit: number;
  /** Whether enough history stands behind `habit` to mention it. */
  knowsHabit: boolean;
  /** Their meetings already on that local day. */
  sameDay: number;
  /** The day's usual load they keep to (stated maximum, else learned), or null when unknown. */
  usualLoad: number | null;
  load: number;
  /** Minutes to their nearest other meeting (Infinity with none). */
  gapMinutes: number;
  /** The gap they want (stated, else learned, else a default). */
  wantedGapMinutes: number;
  /** [0, 1]: learned clustering (0 spreads, 1 back to back); 0 when unknown. */
  clustering: number;
  /** [0, 1]: how well the gap to their other meetings suits them, clustering weighed against room. */
  buffer: number;
  lead: number;
  /** Null when they stated no preferred times. */
  preferredTime: boolean | null;
  /** The stated windows the slot lies in (when preferredTime) or all of them (when not). */
  statedWindows: readonly StatedWindow[];
  /** A day they stated they avoid. */
  avoidedDay: boolean;
  /** A working weekday their history never has a meeting on. */
  neverMeetsThatDay: boolean;
  /** Null when the asker did not say. */
  insideWorkingHours: boolean | null;
  overMax: boolean;
  shortBuffer: boolean;
  /** The slot's weekday on their clock, 0 = Monday. */
  weekday: number;
  /** Minutes after midnight the slot starts, on their clock. */
  minuteOfDay: number;
  /** [0, 1]: everything together. */
  fit: number;
}

/** Learned weights; they add up to 1. Habit leads: it is the pattern most people's calendars show. */
const LEARNED_WEIGHTS = { habit: 0.55, load: 0.2, buffer: 0.15, lead: 0.1 } as const;
/** A stated preferred time takes this share of the score, more than all learned patterns together. */
const STATED_TIME_WEIGHT = 0.7;
/** What a heuristic score of 0 counts as for someone unknown (1 stays 1). */
export const HEURISTIC_FLOOR = 0.5;
/** Credit (of 1 for inside) for a slot on a stated window's day, and again for one within its hours. */
const NEAR_STATED_TIME = 0.5;
/** Multipliers when a stated preference, or a learned avoided day, is broken. */
const PENALTY = { avoidedDay: 0.2, neverMeetsThatDay: 0.5, overMax: 0.4 } as const;
/** With this many meetings learned from, habits are trusted fully. */
const CONFIDENT_MEETINGS = 15;
const DEFAULT_GAP_MINUTES = 15;
/** A clusterer's slot this close to another meeting is as good as back to back; the closeness fades to nothing over the next two hours. */
const CLOSE_MINUTES = 30;
const CLOSENESS_FADE_MINUTES = 120;

/** A person's patterns prepared once per ranking: habit per hour of the week, their meetings sorted and counted by day. */
export class PersonView {
  readonly clock: ZoneReader;
  private readonly habitByHour: Float64Array;
  private readonly knowledge: number;
  private readonly sorted: Interval[];
  private readonly perDay = new Map<number, number>();
  private readonly windows: StatedWindow[];

  constructor(readonly person: RankedPerson) {
    this.windows = person.preferences.preferredTimes.map((t) => ({ start: t.start, end: t.end, days: t.days ?? null }));
    this.clock = ZoneReader.of(person.zone);
    this.habitByHour = habitTable(person.patterns.hourly);
    this.knowledge = Math.min(1, person.patterns.meetings / CONFIDENT_MEETINGS);
    this.sorted = [...person.meetings].sort((a, b) => a.start - b.start);
    for (const m of this.sorted) {
      const day = this.clock.read(m.start).dayNumber;
      this.perDay.set(day, (this.perDay.get(day) ?? 0) + 1);
    }
  }

  /**
   * Their fit: what their history says, weighed by how much of it there is
   * against the asker's heuristic (so knowing nobody ranks as the heuristic
   * does), then stated preferred times mixed in and broken preferences
   * applied as penalties.
   */
  fit(slot: Candidate, now: number): PersonFit {
    const { patterns, preferences } = this.person;
    const from = this.clock.read(slot.start);
    const to = this.clock.read(slot.end - 60_000);
    const learnedHabit = (this.habitByHour[hourIndex(from)]! + this.habitByHour[hourIndex(to)]!) / 2;
    const knowledge = this.knowledge;
    const habit = knowledge * learnedHabit + (1 - knowledge) * 0.5;

    const sameDay = this.perDay.get(from.dayNumber) ?? 0;
    const after = sameDay + 1;
    const learnedLoad = patterns.meetings >= 5 ? patterns.dailyLoad : null;
    const max = preferences.maxMeetingsPerDay;
    const overMax = max !== null && after > max;
    let load: number;
    if (overMax) load = 0;
    else if (learnedLoad) load = after <= Math.max(1, learnedLoad.usual) ? 1 : after <= learnedLoad.busy ? 0.7 : Math.max(0, 0.4 - 0.2 * (after - learnedLoad.busy - 1));
    else load = Math.max(0.4, 1 - 0.1 * sameDay);
    const usualLoad = max ?? (learnedLoad ? Math.max(1, learnedLoad.usual) : null);

    const gapMinutes = this.gapMinutes(slot);
    const wantedGapMinutes = preferences.bufferMinutes ?? clamp(patterns.usualGapMinutes ?? DEFAULT_GAP_MINUTES, 5, 60);
    const room = wantedGapMinutes === 0 ? 1 : Math.min(1, gapMinutes / wantedGapMinutes);
    // A stated buffer says they want room, whatever their history shows.
    const clustering = preferences.bufferMinutes !== null && preferences.bufferMinutes > 0 ? 0 : (patterns.clustering ?? 0);
    const closeness = gapMinutes <= CLOSE_MINUTES ? 1 : Math.max(0, 1 - (gapMinutes - CLOSE_MINUTES) / CLOSENESS_FADE_MINUTES);
    const buffer = clustering * closeness + (1 - clustering) * room;
    const shortBuffer = preferences.bufferMinutes !== null && gapMinutes < preferences.bufferMinutes;

    const daysAhead = Math.max(0, (slot.start - now) / 86_400_000);
    const usualLead = patterns.usualLeadDays;
    const lead = usualLead === null ? 0.5 : Math.exp(-Math.abs(daysAhead - usualLead) / (usualLead + 3));

    const weekdayName = WEEKDAYS[from.weekday]!;
    const windows = this.windows;
    const { holding, stated } = statedTimeFit(windows, from, to);
    const preferredTime = windows.length === 0 ? null : holding.length > 0;
    const avoidedDay = preferences.avoidDays.includes(weekdayName);
    const neverMeetsThatDay = !avoidedDay && patterns.avoidedWeekdays.includes(from.weekday);
    const insideWorkingHours = slot.withinWorkingHours ? slot.withinWorkingHours.has(this.person.userId) : null;

    const learned = LEARNED_WEIGHTS.habit * learnedHabit + LEARNED_WEIGHTS.load * load + LEARNED_WEIGHTS.buffer * buffer + LEARNED_WEIGHTS.lead * lead;
    // The asker's score keeps its order but only half its range: its spread over days
    // cuts a day's later slots hard, which is an order, not a reason to outweigh what
    // someone stated. Without it, what is not known reads as neutral.
    const prior =
      slot.heuristicScore !== null
        ? HEURISTIC_FLOOR + (1 - HEURISTIC_FLOOR) * slot.heuristicScore
        : LEARNED_WEIGHTS.habit * 0.5 + LEARNED_WEIGHTS.load * load + LEARNED_WEIGHTS.buffer * room + LEARNED_WEIGHTS.lead * lead;
    const base = knowledge * learned + (1 - knowledge) * prior;
    let fit = preferredTime === null ? base : STATED_TIME_WEIGHT * stated + (1 - STATED_TIME_WEIGHT) * base;
    if (avoidedDay) fit *= PENALTY.avoidedDay;
    if (neverMeetsThatDay) fit *= PENALTY.neverMeetsThatDay;
    if (overMax) fit *= PENALTY.overMax;
    if (shortBuffer) fit *= 0.5 + (0.5 * gapMinutes) / preferences.bufferMinutes!;

    return {
      knowledge,
      habit,
      knowsHabit: knowledge >= 0.5,
      sameDay,
      usualLoad,
      load,
      gapMinutes,
      wantedGapMinutes,
      clustering,
      buffer,
      lead,
      preferredTime,
      statedWindows: preferredTime ? holding : windows,
      avoidedDay,
      neverMeetsThatDay,
      insideWorkingHours,
      overMax,
      shortBuffer,
      weekday: from.weekday,
      minuteOfDay: from.minuteOfDay,
      fit: clamp(fit, 0, 1),
    };
  }

  /** Minutes from the slot to the nearest of the person's meetings, by binary search. */
  private gapMinutes(slot: Interval): number {
    const meetings = this.sorted;
    let lo = 0;
    let hi = meetings.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (meetings[mid]!.start < slot.start) lo = mid + 1;
      else hi = mid;
    }
    let gap = Infinity;
    if (lo < meetings.length) gap = Math.min(gap, Math.max(0, meetings[lo]!.start - slot.end));
    // Meetings starting earlier may be long; the latest end among the few before decides.
    for (let i = lo - 1; i >= 0 && i >= lo - 8; i--) gap = Math.min(gap, Math.max(0, slot.start - meetings[i]!.end));
    return gap / 60_000;
  }
}

function hourIndex(m: LocalMoment): number {
  return m.weekday * 24 + Math.floor(m.minuteOfDay / 60);
}

/**
 * The stated windows holding the slot, and how near it is to what they said:
 * 1 inside one; otherwise NEAR_STATED_TIME for lying on a window's day and
 * again for lying within a window's hours.
 */
function statedTimeFit(windows: readonly StatedWindow[], from: LocalMoment, to: LocalMoment): { holding: StatedWindow[]; stated: number } {
  const weekdayName = WEEKDAYS[from.weekday]!;
  const oneDay = from.dayNumber === to.dayNumber;
  const holding: StatedWindow[] = [];
  let onDay = false;
  let inHours = false;
  for (const t of windows) {
    const day = !t.days || t.days.includes(weekdayName);
    const hours = oneDay && minutes(t.start) <= from.minuteOfDay && to.minuteOfDay + 1 <= minutes(t.end);
    if (day && hours) holding.push(t);
    onDay ||= day;
    inHours ||= hours;
  }
  return { holding, stated: holding.length > 0 ? 1 : (onDay ? NEAR_STATED_TIME : 0) + (inHours ? NEAR_STATED_TIME : 0) };
}

function minutes(hhmm: string): number {
  return Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
}

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}

/**
 * Habit per hour of the week, in [0, 1]. Half comes from the exact weekday and
 * hour (smoothed into the neighbouring hours), half from how usual the weekday
 * and the hour are each on their own: sparse histories still generalise
 * "Tuesday mornings" to a Tuesday morning hour they never used.
 */
function habitTable(hourly: readonly number[]): Float64Array {
  const cell = new Float64Array(HOURS_A_WEEK);
  const byHour = new Float64Array(24);
  const byDay = new Float64Array(7);
  for (let d = 0; d < 7; d++) {
    for (let h = 0; h < 24; h++) {
      const at = (hh: number) => (hh >= 0 && hh < 24 ? hourly[d * 24 + hh]! : 0);
      cell[d * 24 + h] = at(h) + 0.5 * (at(h - 1) + at(h + 1));
      byHour[h]! += hourly[d * 24 + h]!;
      byDay[d]! += hourly[d * 24 + h]!;
    }
  }
  const hourSmoothed = byHour.map((v, h) => v + 0.5 * ((byHour[h - 1] ?? 0) + (byHour[h + 1] ?? 0)));
  const maxCell = Math.max(...cell);
  const maxHour = Math.max(...hourSmoothed);
  const maxDay = Math.max(...byDay);
  const table = new Float64Array(HOURS_A_WEEK);
  if (maxCell === 0) return table.fill(0.5);
  for (let d = 0; d < 7; d++) {
    for (let h = 0; h < 24; h++) {
      table[d * 24 + h] = 0.5 * (cell[d * 24 + h]! / maxCell) + 0.5 * (hourSmoothed[h]! / maxHour) * (byDay[d]! / maxDay);
    }
  }
  return table;
}
