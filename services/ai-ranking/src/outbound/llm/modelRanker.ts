import type { Logger } from "@sched/logging";
import OpenAI from "openai";
import { zodResponseFormat } from "openai/helpers/zod";
import { CircuitBreaker } from "../../domain/circuitBreaker.js";
import type { RankedPerson } from "../../domain/fit.js";
import type { ScoredSlot } from "../../domain/rank.js";
import { applyModelRanking, ModelRanking } from "./answer.js";
import { summarize } from "./summary.js";

export interface ModelSettings {
  apiKey: string;
  /** Any OpenAI-compatible server; the official API when absent. */
  baseURL?: string | undefined;
  model: string;
  /** The whole model call, connection included, must end within this. */
  timeoutMs: number;
  /** How many of the statistical model's best slots the model may reorder. */
  topSlots: number;
}

const INSTRUCTIONS = [
  "You rank candidate meeting times for a group of people.",
  "People are labelled P1, P2, …; the caller is marked. For each person you get learned habits (from past meetings) and stated preferences.",
  "Stated preferences always outweigh learned habits. Avoid days a person avoids or never meets on, keep within their meeting limits and buffers,",
  "put meetings next to others for people who keep them back to back,",
  "and prefer the weekdays and hours they usually meet at. Each slot comes with a statistical score from a simpler model.",
  "Return every slot id you were given, best first, each with a score from 0 to 1 and one short sentence naming the habits or",
  "preferences behind it, using the labels (for example: Tuesday mornings are when P1 and P2 usually meet).",
].join(" ");

export type Refinement = { ranked: ScoredSlot[]; by: "model" | "statistics"; why?: string };

/**
 * The language model on top of the statistical ranking: it re-ranks the best
 * few slots from an anonymous summary. Any failure (deadline, HTTP error,
 * malformed or invalid answer, open circuit) leaves the statistical ranking
 * as it was, so the caller always gets a valid ranking.
 */
export class ModelRanker {
  private readonly client: OpenAI;
  // Three failures in a row stop the asking for 30 s: a failing server costs no deadline meanwhile.
  private readonly breaker = new CircuitBreaker(3, 30_000);

  constructor(
    private readonly settings: ModelSettings,
    private readonly logger: Logger,
  ) {
    // Retries would outlive the deadline; the circuit breaker handles a failing server instead.
    this.client = new OpenAI({ apiKey: settings.apiKey, baseURL: settings.baseURL, maxRetries: 0, timeout: settings.timeoutMs });
  }

  async refine(ranked: ScoredSlot[], people: readonly RankedPerson[]): Promise<Refinement> {
    if (ranked.length < 2) return { ranked, by: "statistics", why: "nothing to reorder" };
    if (!this.breaker.allow()) return { ranked, by: "statistics", why: "circuit open" };
    // The model reorders within the best tier only: working hours stay a hard line whatever it says.
    const sameTier = ranked.findIndex((s) => s.tier !== ranked[0]!.tier);
    const shown = Math.min(this.settings.topSlots, sameTier < 0 ? ranked.length : sameTier);
    if (shown < 2) return { ranked, by: "statistics", why: "nothing to reorder" };
    try {
      const answer = await this.ask(ranked.slice(0, shown), people);
      const result = applyModelRanking(ranked, shown, answer, people);
      this.breaker.succeeded();
      return { ranked: result, by: "model" };
    } catch (err) {
      this.breaker.failed();
      const why = err instanceof Error ? `${err.name}: ${err.message}`.slice(0, 200) : "unknown error";
      this.logger.warn({ why, circuit: this.breaker.state }, "the language model gave no usable ranking; the statistical ranking answers");
      return { ranked, by: "statistics", why };
    }
  }

  private async ask(slots: readonly ScoredSlot[], people: readonly RankedPerson[]): Promise<ModelRanking> {
    const completion = await this.client.chat.completions.parse(
      {
        model: this.settings.model,
        messages: [
          { role: "system", content: INSTRUCTIONS },
          { role: "user", content: JSON.stringify(summarize(slots, people)) },
        ],
        response_format: zodResponseFormat(ModelRanking, "slot_ranking"),
        temperature: 0,
      },
      { signal: AbortSignal.timeout(this.settings.timeoutMs) },
    );
    const message = completion.choices[0]?.message;
    if (!message?.parsed) throw new Error(message?.refusal ? "the model refused" : "the model gave no answer");
    // parse() already checked it against the schema; checking again keeps the bounds whatever the helper does.
    return ModelRanking.parse(message.parsed);
  }
}
