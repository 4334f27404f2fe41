import { AppError } from "@sched/errors";
import { aiRankingRank, type Mode, type UserProfile } from "@sched/proto";
import type { RecommendedSlot } from "../domain/recommend.js";
import { formatTimestamp, type AvailabilityDeps } from "../inbound/deps.js";

export interface RankingQuestion {
  mode: Mode;
  callerUserId: string;
  /** Everyone who counts, the caller first. */
  people: readonly UserProfile[];
  /** Free for everyone already; ai-ranking only orders them. */
  candidates: readonly RecommendedSlot[];
}

/**
 * The candidates ai-ranking scored, with its scores and reasons, best first
 * (ties: earlier start); null when it did not answer within the deadline,
 * failed, or scored none of them, so that the heuristic's ranking answers.
 * Scores for starts that were not asked about are ignored.
 */
export async function rankWithAI(deps: AvailabilityDeps, question: RankingQuestion): Promise<RecommendedSlot[] | null> {
  const byStart = new Map(question.candidates.map((c) => [formatTimestamp(c.start), c]));
  let scores;
  try {
    ({ scores } = await deps.bus.request(
      aiRankingRank,
      {
        mode: question.mode,
        callerUserId: question.callerUserId,
        people: question.people.map((p) => ({ userId: p.id, timezone: p.timezone })),
        candidates: question.candidates.map((c) => ({
          start: formatTimestamp(c.start),
          end: formatTimestamp(c.end),
          heuristicScore: c.score,
          withinWorkingHours: c.withinWorkingHours,
        })),
      },
      { timeoutMs: deps.aiRankingTimeoutMs },
    ));
  } catch (err) {
    const code = err instanceof AppError ? err.code : "unexpected";
    deps.logger.warn({ code }, "ai-ranking gave no ranking; the heuristic ranks instead");
    return null;
  }

  const ranked: RecommendedSlot[] = [];
  for (const { start, score, reason } of scores) {
    const candidate = byStart.get(start);
    if (!candidate) continue;
    byStart.delete(start);
    ranked.push({ ...candidate, score: Math.round(score * 1000) / 1000, reason });
  }
  if (ranked.length === 0) {
    deps.logger.warn("ai-ranking scored none of the candidates; the heuristic ranks instead");
    return null;
  }
  return ranked.sort((a, b) => b.score - a.score || a.start - b.start);
}
