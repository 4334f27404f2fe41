import type { Handler } from "@sched/bus";
import type { Knex } from "@sched/db";
import { NO_PREFERENCES, type aiRankingRank } from "@sched/proto";
import type { RankedPerson } from "../domain/fit.js";
import { NO_PATTERNS } from "../domain/patterns.js";
import { rankCandidates, type ScoredSlot } from "../domain/rank.js";
import { meetingsAround, patternsOf, peopleByIds } from "../db/queries.js";

/** Meetings this far either side of the candidates still count for the day's load and buffers. */
const AROUND_MS = 86_400_000;

export interface RankDeps {
  db: Knex;
  now: () => number;
  /** Re-ranks the statistical ranking when a language model is configured; resolves to it unchanged otherwise. */
  refine: (ranked: ScoredSlot[], people: readonly RankedPerson[]) => Promise<ScoredSlot[]>;
}

/**
 * ai-ranking.v1.rank: every candidate scored from the counted people's
 * patterns and preferences (rankCandidates), then possibly re-ranked by the
 * language model. People ai-ranking has not heard of count with no history
 * and no preferences.
 */
export function rankHandler(deps: RankDeps): Handler<typeof aiRankingRank> {
  return async (request) => {
    const now = deps.now();
    const candidates = request.candidates.map((c) => ({ start: Date.parse(c.start), end: Date.parse(c.end), heuristicScore: c.heuristicScore, withinWorkingHours: c.withinWorkingHours }));
    // Each score names its slot by the start as it was sent.
    const sentStart = new Map(request.candidates.map((c, i) => [candidates[i]!.start, c.start]));
    if (candidates.length === 0) return { scores: [] };
    const ids = request.people.map((p) => p.userId);
    const from = Math.min(...candidates.map((c) => c.start)) - AROUND_MS;
    const to = Math.max(...candidates.map((c) => c.end)) + AROUND_MS;
    const [known, patterns, meetings] = await Promise.all([
      peopleByIds(deps.db, ids),
      patternsOf(deps.db, ids, request.mode),
      meetingsAround(deps.db, ids, request.mode, new Date(from), new Date(to)),
    ]);
    const byId = new Map(known.map((p) => [p.userId, p]));

    const people: RankedPerson[] = request.people.map((p, i) => {
      const person = byId.get(p.userId);
      return {
        userId: p.userId,
        name: person?.name ?? `participant ${i + 1}`,
        isCaller: p.userId === request.callerUserId,
        zone: p.timezone,
        patterns: patterns.get(p.userId) ?? NO_PATTERNS,
        preferences: person?.preferences ?? NO_PREFERENCES,
        meetings: meetings.get(p.userId) ?? [],
      };
    });
    const ranked = await deps.refine(rankCandidates({ now, people, candidates }), people);
    return { scores: ranked.map((s) => ({ start: sentStart.get(s.start)!, score: Math.min(1, Math.max(0, s.score)), reason: s.reason })) };
  };
}
