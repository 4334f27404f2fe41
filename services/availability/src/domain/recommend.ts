import type { WorkingHoursEntry } from "@sched/proto";
import { DAY_MS, MINUTE_MS, addDays, daysBetween, type LocalDate, ZoneClock } from "@sched/time";
import { clip, gridStarts, merge, subtract, union, type Interval } from "./intervals.js";
import { workingWindowsBetween } from "./workingWindows.js";

export type TimeRange = "morning" | "afternoon" | "evening" | "any";

/** Minutes after local midnight, on the caller's clock (api-decisions part 7). */
export const TIME_RANGE_MINUTES: Record<Exclude<TimeRange, "any">, { from: number; to: number }> = {
  morning: { from: 8 * 60, to: 12 * 60 },
  afternoon: { from: 12 * 60, to: 17 * 60 },
  evening: { from: 17 * 60, to: 21 * 60 },
};

const GRID_MINUTES = 15;

/** Score weights; they add up to 1 so the base score stays in [0, 1]. */
const WEIGHTS = { workingHours: 0.6, buffer: 0.25, soonness: 0.15 } as const;
/** A gap this long to the nearest other meeting earns the whole buffer weight. */
export const BUFFER_TARGET_MS = 30 * MINUTE_MS;
/** Each suggestion already chosen on a local day multiplies the score of the day's others by this. */
const SAME_DAY_FACTOR = 0.8;

export interface CountedPerson {
  userId: string;
  zone: string;
  workingHours: readonly WorkingHoursEntry[];
  /** Their busy time in any order. */
  busy: readonly Interval[];
  isCaller: boolean;
  /** Counted when free, never required (api-decisions 14). */
  optional?: boolean;
  /** Time they keep free around their busy time (their stated `bufferMinutes`): a hard rule. */
  bufferMs?: number;
  /** How the reason names them (their e-mail). */
  label?: string;
}

export interface RecommendInput {
  now: number;
  /** The caller's zone: time-range windows, the grid and "days" are read on this clock. */
  zone: string;
  horizon: Interval;
  timeRange: TimeRange;
  durationMs: number;
  /** Everyone who counts, the caller included (exactly one isCaller, never optional). */
  people: readonly CountedPerson[];
  limit: number;
  /** No slot starts before now plus this. */
  minimumNoticeMs?: number;
  /** The least number of people free for a slot, required and optional together. */
  minimumAttendees?: number;
}

export interface RecommendedSlot extends Interval {
  score: number;
  reason: string;
  /** userIds of the counted people (caller included) for whom the slot lies inside their working hours. */
  withinWorkingHours: string[];
  /** userIds of the people free for the whole slot, when an optional one is not. */
  availableParticipants?: string[];
}

type EmptyReason = "horizon_too_short" | "minimum_notice" | "outside_working_hours" | "buffers" | "no_common_free_time" | "minimum_attendees";

/** The share of the score that optional people's attendance decides, when there are any. */
const OPTIONAL_WEIGHT = 0.4;

export interface Recommendation {
  slots: RecommendedSlot[];
  emptyReason?: EmptyReason;
}

/**
 * Meeting times at which every counted person is free, best first.
 *
 * Where to look: the horizon from max(horizon.start, now) — never a slot in the
 * past — to horizon.end, cut to the time-range windows on the caller's clock
 * (`any` = the caller's own working hours). Starts lie on the caller's local
 * 15-minute grid; the whole slot must fit in one window and be free for everyone.
 *
 * Score (deterministic, in [0, 1]):
 *   base = 0.6 × (share of people inside their own working hours for the whole slot)
 *        + 0.25 × min(1, smallest gap from the slot to anyone's other meeting / 30 min)
 *        + 0.15 × (1 − how far into the horizon the slot starts, 0 = at its start)
 * Slots are then chosen greedily, highest score first (ties: earlier start); each
 * slot already chosen on the same local day multiplies a candidate's score by 0.8,
 * which spreads suggestions across days, and a candidate overlapping a chosen slot
 * is skipped, so suggestions are distinct times. The returned score is that
 * adjusted score rounded to three decimals; the list is ordered by it, ties by start.
 *
 * When nothing fits, `emptyReason`, checked in this order:
 * - horizon_too_short: no grid start with room for the duration exists between
 *   max(from, now) and `to` inside the time-range windows (for `any`: at all),
 *   whoever is busy;
 * - outside_working_hours (`any` only): such starts exist, but none with the whole
 *   meeting inside the caller's working hours;
 * - no_common_free_time: fitting starts exist, but at each one someone is busy.
 *
 * Cost: busy lists are merged once per person and once across everyone, free
 * time is one subtraction, and scoring sweeps each person's sorted lists with a
 * cursor, so the work grows linearly with meetings and candidates (plus the
 * sort of unsorted input); the greedy choice costs limit × candidates.
 */
export function recommendSlots(input: RecommendInput): Recommendation {
  const { now, zone, horizon, timeRange, durationMs, people } = input;
  if (!(durationMs > 0)) throw new RangeError("durationMs must be positive");
  const caller = people.find((p) => p.isCaller);
  if (!caller || caller.optional) throw new RangeError("the caller must be among the required people");
  const limit = Math.max(1, Math.floor(input.limit));
  const clock = ZoneClock.of(zone);

  const earliestAtAll = Math.max(horizon.start, now);
  const earliest = Math.max(horizon.start, now + Math.max(0, input.minimumNoticeMs ?? 0));
  const end = horizon.end;
  if (end - earliestAtAll < durationMs) return { slots: [], emptyReason: "horizon_too_short" };
  const anyStart = (windows: Interval[]) => windows.some((w) => gridStarts(w, GRID_MINUTES, durationMs, zone).length > 0);
  const frameOf = (from: number): Interval[] => {
    const span = { start: from, end };
    return timeRange === "any" ? [span] : clip(rangeWindows(span, clock, timeRange), span);
  };
  if (!anyStart(frameOf(earliestAtAll))) return { slots: [], emptyReason: "horizon_too_short" };
  if (end - earliest < durationMs || !anyStart(frameOf(earliest))) return { slots: [], emptyReason: "minimum_notice" };
  const span: Interval = { start: earliest, end };

  const frame = frameOf(earliest);
  const searchWindows =
    timeRange === "any" ? clip(workingWindowsBetween(earliest, end, caller.zone, caller.workingHours), span) : frame;
  if (timeRange === "any" && !anyStart(searchWindows)) return { slots: [], emptyReason: "outside_working_hours" };

  const busyByPerson = people.map((p) => merge(p.busy));
  const blockedByPerson = people.map((p, i) => widen(busyByPerson[i]!, p.bufferMs ?? 0));
  const workByPerson = people.map((p) => workingWindowsBetween(earliest, end, p.zone, p.workingHours));
  const required = people.map((_, i) => i).filter((i) => !people[i]!.optional);
  const free = subtract(searchWindows, union(required.map((i) => blockedByPerson[i]!)));

  const starts: number[] = [];
  for (const f of free) for (const s of gridStarts(f, GRID_MINUTES, durationMs, zone)) starts.push(s);
  if (starts.length === 0) {
    const freeWithoutBuffers = subtract(searchWindows, union(required.map((i) => busyByPerson[i]!)));
    return { slots: [], emptyReason: anyStart(freeWithoutBuffers) ? "buffers" : "no_common_free_time" };
  }

  const candidates = scoreCandidates(starts, durationMs, span, people, busyByPerson, blockedByPerson, workByPerson).filter(
    (c) => input.minimumAttendees === undefined || c.attending.length >= input.minimumAttendees,
  );
  if (candidates.length === 0) return { slots: [], emptyReason: "minimum_attendees" };
  const optionalCount = people.length - required.length;
  const today = clock.localDateOf(now);
  const chosen = chooseSpread(candidates, durationMs, limit, clock);
  const slots = chosen.map(({ candidate, sameDayBefore, score }): RecommendedSlot => {
    const slot: RecommendedSlot = {
      start: candidate.start,
      end: candidate.start + durationMs,
      score: Math.round(score * 1000) / 1000,
      reason: reasonFor(candidate, people, sameDayBefore, daysBetween(today, clock.localDateOf(candidate.start))),
      withinWorkingHours: candidate.inside.map((i) => people[i]!.userId),
    };
    if (candidate.attending.length < required.length + optionalCount) slot.availableParticipants = candidate.attending.map((i) => people[i]!.userId);
    return slot;
  });
  slots.sort((a, b) => b.score - a.score || a.start - b.start);
  return { slots };
}

/** A merged list with each interval grown by `ms` on both sides, merged again. */
function widen(merged: readonly Interval[], ms: number): Interval[] {
  if (!(ms > 0)) return merged.slice();
  return merge(merged.map((i) => ({ start: i.start - ms, end: i.end + ms })));
}

interface Candidate {
  start: number;
  base: number;
  /** Indexes into people. */
  inside: number[];
  /** Indexes into people of those free for the slot (with their buffers): every required one, and the optional ones free. */
  attending: number[];
  /** Smallest gap from the slot to another meeting of anyone attending (Infinity when none has one). */
  gap: number;
}

/**
 * Scores starts at which every required person is free. An optional person
 * attends when their busy time, widened by their buffer, leaves the slot
 * free; the working-hours share and the gap count those attending, and
 * when there are optional people the base is scaled by
 * (1 − OPTIONAL_WEIGHT) + OPTIONAL_WEIGHT × the share of them attending.
 */
function scoreCandidates(
  starts: readonly number[],
  durationMs: number,
  span: Interval,
  people: readonly CountedPerson[],
  busyByPerson: readonly Interval[][],
  blockedByPerson: readonly Interval[][],
  workByPerson: readonly Interval[][],
): Candidate[] {
  const busyCursor = new Array<number>(people.length).fill(0);
  const blockedCursor = new Array<number>(people.length).fill(0);
  const workCursor = new Array<number>(people.length).fill(0);
  const optionalCount = people.filter((p) => p.optional).length;
  const spanLength = span.end - span.start;
  const candidates: Candidate[] = [];
  for (const start of starts) {
    const end = start + durationMs;
    const inside: number[] = [];
    const attending: number[] = [];
    let optionalAttending = 0;
    let gap = Infinity;
    for (let p = 0; p < people.length; p++) {
      const work = workByPerson[p]!;
      let w = workCursor[p]!;
      while (w < work.length && work[w]!.end <= start) w++;
      workCursor[p] = w;
      const isInside = w < work.length && work[w]!.start <= start && end <= work[w]!.end;
      if (isInside) inside.push(p);

      if (people[p]!.optional) {
        const blocked = blockedByPerson[p]!;
        let k = blockedCursor[p]!;
        while (k < blocked.length && blocked[k]!.end <= start) k++;
        blockedCursor[p] = k;
        if (k < blocked.length && blocked[k]!.start < end) continue;
        optionalAttending++;
      }
      attending.push(p);

      const busy = busyByPerson[p]!;
      let b = busyCursor[p]!;
      while (b < busy.length && busy[b]!.end <= start) b++;
      busyCursor[p] = b;
      // The slot is free for everyone attending, so busy[b] (if any) starts at or after its end.
      if (b > 0) gap = Math.min(gap, start - busy[b - 1]!.end);
      if (b < busy.length) gap = Math.min(gap, busy[b]!.start - end);
    }
    const insideAttending = inside.filter((i) => attending.includes(i)).length;
    const base =
      (WEIGHTS.workingHours * (insideAttending / attending.length) +
        WEIGHTS.buffer * Math.min(1, gap / BUFFER_TARGET_MS) +
        WEIGHTS.soonness * (1 - (start - span.start) / spanLength)) *
      (optionalCount === 0 ? 1 : 1 - OPTIONAL_WEIGHT + OPTIONAL_WEIGHT * (optionalAttending / optionalCount));
    candidates.push({ start, base, inside, attending, gap });
  }
  return candidates;
}

interface Choice {
  candidate: Candidate;
  score: number;
  sameDayBefore: number;
}

/** Greedy choice with the same-day factor; `candidates` are sorted by start. */
function chooseSpread(candidates: readonly Candidate[], durationMs: number, limit: number, clock: ZoneClock): Choice[] {
  const day = candidates.map((c) => Math.floor(clock.toWall(c.start) / DAY_MS));
  const perDay = new Map<number, number>();
  const taken = new Uint8Array(candidates.length);
  const chosen: Choice[] = [];
  while (chosen.length < limit) {
    let best = -1;
    let bestScore = -1;
    for (let i = 0; i < candidates.length; i++) {
      if (taken[i]) continue;
      const score = candidates[i]!.base * SAME_DAY_FACTOR ** (perDay.get(day[i]!) ?? 0);
      if (score > bestScore) {
        best = i;
        bestScore = score;
      }
    }
    if (best < 0) break;
    const pick = candidates[best]!;
    const sameDayBefore = perDay.get(day[best]!) ?? 0;
    chosen.push({ candidate: pick, score: bestScore, sameDayBefore });
    perDay.set(day[best]!, sameDayBefore + 1);
    // Starts within one duration of the pick overlap it; they sit next to it in the list.
    taken[best] = 1;
    for (let i = best - 1; i >= 0 && candidates[i]!.start > pick.start - durationMs; i--) taken[i] = 1;
    for (let i = best + 1; i < candidates.length && candidates[i]!.start < pick.start + durationMs; i++) taken[i] = 1;
  }
  return chosen;
}

/** The time-range window of every local date the span touches, on the caller's clock. */
function rangeWindows(span: Interval, clock: ZoneClock, range: Exclude<TimeRange, "any">): Interval[] {
  const { from, to } = TIME_RANGE_MINUTES[range];
  const windows: Interval[] = [];
  const last: LocalDate = clock.localDateOf(span.end - 1);
  for (let date = clock.localDateOf(span.start); date <= last; date = addDays(date, 1)) {
    const start = clock.at(date, from);
    const end = clock.at(date, to);
    if (start < end) windows.push({ start, end });
  }
  return merge(windows);
}

function reasonFor(candidate: Candidate, people: readonly CountedPerson[], sameDayBefore: number, daysAhead: number): string {
  const when = daysAhead === 0 ? "Today" : daysAhead === 1 ? "Tomorrow" : `In ${daysAhead} days`;
  const requiredCount = people.filter((p) => !p.optional).length;
  const optional = people.flatMap((p, i) => (p.optional ? [i] : []));
  const free = requiredCount === 1 ? "you are free" : optional.length === 0 ? "everyone is free" : "everyone required is free";
  const attendingCount = candidate.attending.length;
  const inside = candidate.inside.filter((i) => candidate.attending.includes(i)).length;
  const work =
    attendingCount === 1
      ? inside === 1
        ? "inside your working hours"
        : "outside your working hours"
      : inside === attendingCount
        ? `inside working hours for ${attendingCount === 2 ? "both" : `all ${attendingCount}`} people`
        : inside === 0
          ? "outside everyone's working hours"
          : `inside working hours for ${inside} of ${attendingCount} people`;
  const gapMinutes = Math.floor(candidate.gap / MINUTE_MS);
  const buffer =
    candidate.gap >= BUFFER_TARGET_MS
      ? `at least ${BUFFER_TARGET_MS / MINUTE_MS} minutes from other meetings`
      : gapMinutes === 0
        ? "right next to another meeting"
        : `${gapMinutes} minute${gapMinutes === 1 ? "" : "s"} from the nearest other meeting`;
  const spread =
    sameDayBefore === 0
      ? ""
      : `, ranked lower because ${sameDayBefore} higher-ranked suggestion${sameDayBefore === 1 ? " falls" : "s fall"} on the same day`;
  const coming = optional.filter((i) => candidate.attending.includes(i)).map((i) => people[i]!.label ?? people[i]!.userId);
  const missing = optional.filter((i) => !candidate.attending.includes(i)).map((i) => people[i]!.label ?? people[i]!.userId);
  const optionalSentence =
    optional.length === 0
      ? ""
      : ` Optional: ${coming.length > 0 ? `${coming.join(", ")} can come` : "none can come"}${missing.length > 0 ? `; ${missing.join(", ")} cannot` : ""}.`;
  return `${when} ${free}, ${work}, ${buffer}${spread}.${optionalSentence}`;
}
