import { bind, type Stoppable } from "@sched/bus";
import { aiRankingRank } from "@sched/proto";
import { env } from "@sched/config";
import { setActiveSpanAttributes } from "@sched/telemetry";
import { defineService, type ServiceDeps } from "@sched/runtime";
import { z } from "zod";
import { consumeHistory } from "./consumers/history.js";
import { startRelearning } from "./consumers/relearning.js";
import { rankHandler } from "./inbound/rank.js";
import type { RankedPerson } from "./domain/fit.js";
import type { ScoredSlot } from "./domain/rank.js";
import { ModelRanker } from "./outbound/llm/modelRanker.js";
import { migrations } from "./db/migrations/index.js";

const config = z
  .object({
    /** With AI_MODEL, turns the language model on; without, the statistical model ranks alone. */
    OPENAI_API_KEY: env.optional(z.string().min(1)),
    /** Any OpenAI-compatible server (a local one included); the official API when unset. */
    OPENAI_BASE_URL: env.optional(z.url()),
    AI_MODEL: env.optional(z.string().min(1)),
    /** The model's whole answer must arrive within this; keep it under availability's AI_RANKING_TIMEOUT_MS. */
    AI_MODEL_TIMEOUT_MS: env.positiveInt(600),
    /** How many of the statistical model's best slots the language model may reorder. */
    AI_MODEL_TOP_SLOTS: z.coerce.number().int().min(2).max(50).default(10),
    /** How often each replica checks whether a rebuild has started (milliseconds). */
    AI_HISTORY_CHECK_MS: env.positiveInt(5_000),
    /** The least time between two relearning runs of a replica, which runs when its consumers queue people (milliseconds): about the most patterns lag behind. */
    AI_RELEARN_EVERY_MS: env.positiveInt(500),
  })
  .refine((c) => (c.OPENAI_API_KEY === undefined) === (c.AI_MODEL === undefined), {
    message: "OPENAI_API_KEY and AI_MODEL are set together or not at all",
    path: ["AI_MODEL"],
  });
export type AiRankingConfig = z.output<typeof config>;

/** Scores candidate meeting times from people's history and preferences, optionally with a language model on top. */
export const aiRankingService = defineService({
  name: "ai-ranking",
  schema: "ai_ranking",
  migrations,
  config,
  start: (deps) => serveAiRanking(deps, Date.now),
});

/** The model's ranking, with which ranking answered (and why not the model's) on the request's span, for trace dashboards. */
async function refineTraced(model: ModelRanker, ranked: ScoredSlot[], people: readonly RankedPerson[]): Promise<ScoredSlot[]> {
  const refinement = await model.refine(ranked, people);
  setActiveSpanAttributes({ "sched.ai.ranked_by": refinement.by, ...(refinement.why !== undefined ? { "sched.ai.fallback_reason": refinement.why } : {}) });
  return refinement.ranked;
}

export async function serveAiRanking(deps: ServiceDeps<AiRankingConfig>, now: () => number): Promise<Stoppable> {
  const { bus, db, logger, config: c } = deps;
  const model =
    c.OPENAI_API_KEY && c.AI_MODEL
      ? new ModelRanker({ apiKey: c.OPENAI_API_KEY, baseURL: c.OPENAI_BASE_URL, model: c.AI_MODEL, timeoutMs: c.AI_MODEL_TIMEOUT_MS, topSlots: c.AI_MODEL_TOP_SLOTS }, logger)
      : null;
  logger.info({ languageModel: model ? c.AI_MODEL : "none" }, "ai-ranking ranks with the statistical model" + (model ? " and a language model on top" : ""));
  const served = await bus.serve({ name: "ai-ranking", version: "1.0.0", description: "Ranks meeting times from history and preferences" }, [
    bind(aiRankingRank, rankHandler({ db, now, refine: (ranked, people) => (model ? refineTraced(model, ranked, people) : Promise.resolve(ranked)) })),
  ]);
  // Relearning runs when the history consumers queue someone, not on a fast timer: an idle replica stays asleep.
  const relearning = startRelearning(db, logger, now, c.AI_RELEARN_EVERY_MS);
  const history = await consumeHistory(bus, db, logger, c.AI_HISTORY_CHECK_MS, now, () => relearning.wake());
  return {
    stop: async () => {
      await served.stop();
      await history.stop();
      await relearning.stop();
    },
  };
}
