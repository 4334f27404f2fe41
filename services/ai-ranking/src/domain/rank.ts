import { PersonView, type Interval, type PersonFit, type RankedPerson } from "./fit.js";
import { reasonFor } from "./reasons.js";

export interface RankingInput {
  now: number;
  /** Everyone who counts; exactly one is the caller. */
  people: readonly RankedPerson[];
  candidates: readonly Interval[];
}

export interface ScoredSlot extends Interval {
  score: number;
  reason: string;
  /** Each person's fit, in the order of `people`. */
  fits: PersonFit[];
}

/** Share of the score that follows the person the slot suits least, so one person's bad hour is not averaged away. */
export const LEAST_SUITED_WEIGHT = 0.3;

/**
 * The statistical model: every candidate scored in [0, 1] from each person's
 * learned patterns and stated preferences, best first (ties: earlier start).
 * score = 0.7 × mean fit + 0.3 × smallest fit (see PersonView.fit).
 * Runs in time linear in candidates × people, with no I/O.
 */
export function rankCandidates(input: RankingInput): ScoredSlot[] {
  const views = input.people.map((p) => new PersonView(p));
  const scored = input.candidates.map((slot) => {
    const fits = views.map((v) => v.fit(slot, input.now));
    let sum = 0;
    let least = 1;
    for (const f of fits) {
      sum += f.fit;
      least = Math.min(least, f.fit);
    }
    const score = (1 - LEAST_SUITED_WEIGHT) * (sum / Math.max(1, fits.length)) + LEAST_SUITED_WEIGHT * (fits.length ? least : 0);
    return { start: slot.start, end: slot.end, score, fits, reason: "" };
  });
  scored.sort((a, b) => b.score - a.score || a.start - b.start);
  for (const s of scored) s.reason = reasonFor(s, views);
  return scored;
}
