import { PersonView, type Candidate, type Interval, type PersonFit, type RankedPerson } from "./fit.js";
import { explain, type Claim } from "./reasons.js";

/** A candidate as askers send it; the optional parts are what the asker knows (see aiRankingRank). */
interface CandidateInput extends Interval {
  heuristicScore?: number | undefined;
  withinWorkingHours?: readonly string[] | undefined;
}

export interface RankingInput {
  now: number;
  /** Everyone who counts; exactly one is the caller. */
  people: readonly RankedPerson[];
  candidates: readonly CandidateInput[];
}

export interface ScoredSlot extends Interval {
  score: number;
  reason: string;
  /** What the statistical reason says of whom, for checking it against the truth (a language model's reason replaces the text, not these). */
  claims: Claim[];
  /** 0: inside every counted person's working hours, or nothing known of them; 1: outside someone's. Lower tiers rank first. */
  tier: number;
  /** Each person's fit, in the order of `people`. */
  fits: PersonFit[];
}

/** Share of the score that follows the person the slot suits least, so one person's bad hour is not averaged away. */
const LEAST_SUITED_WEIGHT = 0.3;
/** With working hours as a tier, scores inside everyone's hours lie in [INSIDE_FLOOR, 1], the others below OUTSIDE_CEILING. */
const INSIDE_FLOOR = 0.5;
const OUTSIDE_CEILING = 0.49;

/**
 * The statistical model: every candidate scored in [0, 1] from each person's
 * learned patterns and stated preferences, best first (ties: earlier start).
 * fit = 0.7 × mean fit + 0.3 × smallest fit (see PersonView.fit).
 *
 * Working hours are a hard tier: when some candidates lie inside every
 * counted person's working hours and others do not, every one inside ranks
 * above every one outside (the first take the scores from 0.5 up, the others
 * those under 0.49, ordered by fit and by the share of people whose hours
 * hold them). When none lies inside everyone's hours, the request asked for
 * such times (an evening, say) and fit alone orders them.
 *
 * Runs in time linear in candidates × people, with no I/O.
 */
export function rankCandidates(input: RankingInput): ScoredSlot[] {
  const views = input.people.map((p) => new PersonView(p));
  const candidates: Candidate[] = input.candidates.map((c) => ({
    start: c.start,
    end: c.end,
    heuristicScore: c.heuristicScore ?? null,
    withinWorkingHours: c.withinWorkingHours ? new Set(c.withinWorkingHours) : null,
  }));
  const scored = candidates.map((slot) => {
    const fits = views.map((v) => v.fit(slot, input.now));
    let sum = 0;
    let least = 1;
    let inside = 0;
    for (const f of fits) {
      sum += f.fit;
      least = Math.min(least, f.fit);
      if (f.insideWorkingHours !== false) inside++;
    }
    const fit = (1 - LEAST_SUITED_WEIGHT) * (sum / Math.max(1, fits.length)) + LEAST_SUITED_WEIGHT * (fits.length ? least : 0);
    return { start: slot.start, end: slot.end, score: fit, fits, reason: "", claims: [] as Claim[], tier: inside === fits.length ? 0 : 1, share: inside / Math.max(1, fits.length) };
  });
  const tiered = scored.some((s) => s.tier === 0) && scored.some((s) => s.tier === 1);
  for (const s of scored) {
    if (!tiered) s.tier = 0;
    else s.score = s.tier === 0 ? INSIDE_FLOOR + (1 - INSIDE_FLOOR) * s.score : OUTSIDE_CEILING * (0.5 * s.share + 0.5 * s.score);
  }
  scored.sort((a, b) => a.tier - b.tier || b.score - a.score || a.start - b.start);
  return scored.map(({ share: _share, ...s }) => {
    const reason = explain(s, views);
    return { ...s, reason: reason.text, claims: reason.claims };
  });
}
