import { ZoneReader } from "./localTime.js";
import { HISTORY_DAYS, patternsOf, spanOf, tallyDays, type DaySpan, type HistoryMeeting, type Patterns } from "./patterns.js";
import { addTally, sumTallies, type Tally } from "./tally.js";

const DAY_MS = 86_400_000;

/**
 * What is kept of one person's learning between runs (per e-mail and mode):
 * the sum of the tallies of their local days from `firstFullDay` on, each
 * day's own tally kept beside it. Days before `firstFullDay` hold the edge of
 * the HISTORY_DAYS window, which moves with the clock, so they are counted
 * afresh at every run from the meetings still inside it.
 */
export interface Learned {
  zone: string;
  firstFullDay: number;
  totals: Tally;
}

/**
 * The first local day wholly inside the window at `now`: the day after the
 * one the window starts in. A meeting before the window's start can still
 * fall on that next day where the zone's clock goes back at midnight, so the
 * window's first two days are the edge.
 */
export function windowAt(now: number, zone: string): { since: number; firstFullDay: number } {
  const since = now - HISTORY_DAYS * DAY_MS;
  return { since, firstFullDay: ZoneReader.of(zone).read(since).dayNumber + 2 };
}

/** Instants [from, to) that hold every meeting of these local days on the person's clock, and (but for a clock's change) no other's. */
interface StartRange {
  from: number;
  to: number;
}

export type RelearningPlan =
  | { full: true; since: number; firstFullDay: number }
  | {
      full: false;
      since: number;
      firstFullDay: number;
      /** Days kept whose meetings changed, to count again. */
      daysToRecount: number[];
      /** Where the meetings of those days and of the window's edge start (and at or after `since`). */
      ranges: StartRange[];
    };

/**
 * Decides how to relearn a person: from their whole window when nothing is
 * kept, when the kept days were read on another clock (a new zone moves every
 * local hour), or when the kept window starts after today's (the clock went
 * back); otherwise only the days holding the starts touched since the last
 * run (a moved meeting touches its old and its new start) and the window's edge.
 */
export function planRelearning(kept: Learned | null, zone: string, now: number, touchedStarts: readonly number[]): RelearningPlan {
  const { since, firstFullDay } = windowAt(now, zone);
  if (!kept || kept.zone !== zone || kept.firstFullDay > firstFullDay) return { full: true, since, firstFullDay };
  const clock = ZoneReader.of(zone);
  const daysToRecount = [...new Set(touchedStarts.map((t) => clock.read(t).dayNumber))].filter((d) => d >= firstFullDay).sort((a, b) => a - b);
  // Each day read on its own clock: a recount reads the day's meetings, not a day and a half of its neighbours' too.
  const ranges: StartRange[] = [{ from: since, to: clock.dayRange(firstFullDay - 1).to }];
  for (const day of daysToRecount) {
    const { from, to } = clock.dayRange(day);
    const last = ranges[ranges.length - 1]!;
    if (from <= last.to) last.to = Math.max(last.to, to);
    else ranges.push({ from, to });
  }
  return { full: false, since, firstFullDay, daysToRecount, ranges };
}

/** What a relearning keeps, and the patterns it learned. */
export interface Relearned {
  learned: Learned;
  /** Kept days to write (new or changed tallies). */
  write: Map<number, Tally>;
  /** Kept days to delete: gone out of the window, or left without meetings. */
  remove: number[];
  /** The window's edge days, counted afresh and not kept. */
  edge: Map<number, Tally>;
}

/** A full relearning from every meeting in the window (start at or after `since`); every kept day is replaced. */
export function learnWhole(meetings: readonly HistoryMeeting[], zone: string, firstFullDay: number): Relearned {
  const days = tallyDays(meetings, zone);
  const write = new Map([...days].filter(([day]) => day >= firstFullDay));
  const edge = new Map([...days].filter(([day]) => day < firstFullDay));
  return { learned: { zone, firstFullDay, totals: sumTallies(write.values()) }, write, remove: [], edge };
}

/**
 * An incremental relearning: `keptDays` are the kept tallies of the days to
 * recount and of every kept day now before the window's first full day;
 * `meetings` those starting in the plan's ranges. Kept days leaving the
 * window come off the totals; each recounted day's old tally comes off and
 * its new one goes on.
 */
export function learnChanges(
  plan: Extract<RelearningPlan, { full: false }>,
  kept: Learned,
  keptDays: ReadonlyMap<number, Tally>,
  meetings: readonly HistoryMeeting[],
): Relearned {
  const totals = addTally(sumTallies([]), kept.totals);
  const write = new Map<number, Tally>();
  const remove: number[] = [];
  for (const [day, tally] of keptDays) {
    if (day >= plan.firstFullDay) continue;
    addTally(totals, tally, -1);
    remove.push(day);
  }
  const counted = tallyDays(meetings, kept.zone);
  for (const day of plan.daysToRecount) {
    const old = keptDays.get(day);
    const now = counted.get(day);
    if (old) addTally(totals, old, -1);
    if (now) {
      addTally(totals, now);
      write.set(day, now);
    } else if (old) remove.push(day);
  }
  const edge = new Map([...counted].filter(([day]) => day < plan.firstFullDay));
  return { learned: { zone: kept.zone, firstFullDay: plan.firstFullDay, totals }, write, remove, edge };
}

/** The patterns of a relearning, given the first and last kept day with meetings after its writes. */
export function patternsAfter(relearned: Relearned, keptSpan: DaySpan | null): Patterns {
  const tally = addTally(sumTallies(relearned.edge.values()), relearned.learned.totals);
  const edgeSpan = spanOf(relearned.edge.keys());
  const span = spanOf([...(edgeSpan ? [edgeSpan.first, edgeSpan.last] : []), ...(keptSpan ? [keptSpan.first, keptSpan.last] : [])]);
  return patternsOf(tally, span);
}

/**
 * The first and last kept day after a relearning's writes: its written days
 * and `untouched`, the first and last kept day from the window's first full
 * day on that it neither recounted nor removed (null for a full relearning,
 * which replaces every kept day). Days it removed are before the window's
 * first full day or recounted without meetings, so none of them counts.
 */
export function keptSpanAfter(relearned: Relearned, untouched: DaySpan | null): DaySpan | null {
  return spanOf([...relearned.write.keys(), ...(untouched ? [untouched.first, untouched.last] : [])]);
}
