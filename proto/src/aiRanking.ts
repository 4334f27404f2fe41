import { z } from "zod";
import { endpoint } from "./contract.js";
import { Mode, Timestamp } from "./common.js";

/** Most candidate slots one ranking request may carry. */
export const MAX_RANKING_CANDIDATES = 500;

/**
 * Scores candidate meeting times for the people who count (the caller among
 * them) from their history and preferences (api-decisions 7, `useAI`).
 * Candidates are free for everyone already; the ranker only orders them.
 * It may leave candidates out of `scores`; the asker ranks only those scored.
 * Askers wait a short deadline and fall back to their own ranking when no
 * answer comes, so a slow ranker degrades the ranking, never the request.
 */
export const aiRankingRank = endpoint(
  "ai-ranking.v1.rank",
  z.object({
    mode: Mode,
    callerUserId: z.string().min(1),
    people: z
      .array(z.object({ userId: z.string().min(1), timezone: z.string().min(1) }))
      .min(1)
      .max(101),
    /** Distinct, non-overlapping times, in the asker's own order (its best first). */
    candidates: z
      .array(
        z.object({
          start: Timestamp,
          end: Timestamp,
          /**
           * The asker's own score for the slot, spread over days included: what
           * ranking falls back to for people it knows nothing about. Absent: the
           * asker's order says everything it knows.
           */
          heuristicScore: z.number().min(0).max(1).optional(),
          /** userIds of the people whose working hours hold the whole slot; absent when the asker does not know them. */
          withinWorkingHours: z.array(z.string().min(1)).max(101).optional(),
        }),
      )
      .max(MAX_RANKING_CANDIDATES),
  }),
  z.object({
    scores: z.array(
      z.object({
        /** The start of the candidate scored, as sent. */
        start: Timestamp,
        score: z.number().min(0).max(1),
        /** One human-readable sentence, shown to the user as the slot's `reason`. */
        reason: z.string().min(1).max(500),
      }),
    ),
  }),
);
