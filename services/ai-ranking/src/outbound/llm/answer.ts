import { z } from "zod";
import type { RankedPerson } from "../../domain/fit.js";
import type { ScoredSlot } from "../../domain/rank.js";
import { labelOf, slotIdOf } from "./summary.js";

/** The answer the model must give (sent as its JSON schema, checked again on arrival). */
export const ModelRanking = z.object({
  ranking: z
    .array(
      z.object({
        slot: z.string().describe("A slot id from the summary, such as S1"),
        score: z.number().min(0).max(1).describe("How well the slot suits everyone, 0 to 1"),
        // No length bounds here: strict structured output on some servers refuses them; checked below instead.
        reason: z.string().describe("One short sentence naming the habits or preferences behind the score, people by label"),
      }),
    )
    .min(1),
});
export type ModelRanking = z.infer<typeof ModelRanking>;

export class InvalidModelAnswer extends Error {}

/**
 * Applies the model's ranking to the top slots it was shown. Every slot it
 * names must be one it was shown, once; slots it leaves out keep their
 * statistical order after the ones it ranked. The re-ranked slots are scored
 * above every slot it was not shown, so re-ranking never reaches further down
 * than the slots it saw. Labels in reasons become names again.
 */
export function applyModelRanking(
  ranked: readonly ScoredSlot[],
  shown: number,
  answer: ModelRanking,
  people: readonly RankedPerson[],
): ScoredSlot[] {
  const top = ranked.slice(0, shown);
  const rest = ranked.slice(shown);
  const byId = new Map(top.map((s, i) => [slotIdOf(i), s]));
  const seen = new Set<string>();
  for (const entry of answer.ranking) {
    if (!byId.has(entry.slot)) throw new InvalidModelAnswer(`the model named a slot it was not shown: ${entry.slot.slice(0, 20)}`);
    if (seen.has(entry.slot)) throw new InvalidModelAnswer(`the model named ${entry.slot} twice`);
    if (entry.reason.trim() === "") throw new InvalidModelAnswer(`the model gave ${entry.slot} no reason`);
    seen.add(entry.slot);
  }
  const floor = rest.length > 0 ? rest[0]!.score : 0;
  const lift = (score: number) => floor + (1 - floor) * score;
  const reranked: ScoredSlot[] = answer.ranking.map((entry) => {
    const slot = byId.get(entry.slot)!;
    return { ...slot, score: lift(entry.score), reason: withNames(entry.reason, people) };
  });
  // Unranked slots of the shown ones go right under the lowest the model ranked
  // (a thousandth under: askers round scores to three decimals).
  const lowest = Math.min(...reranked.map((s) => s.score));
  const left = top.filter((_, i) => !seen.has(slotIdOf(i))).map((s) => ({ ...s, score: Math.max(floor, Math.min(lowest - 0.001, lift(s.score))) }));
  return [...[...reranked, ...left].sort((a, b) => b.score - a.score || a.start - b.start), ...rest];
}

/** Reasons are shown to users as one sentence: a long one is cut. */
const MAX_REASON = 300;

function withNames(reason: string, people: readonly RankedPerson[]): string {
  const named = reason.trim().replace(/\bP(\d{1,3})\b/g, (label, n: string) => {
    const person = people[Number(n) - 1];
    return person && labelOf(Number(n) - 1) === label ? (person.isCaller ? "you" : person.name) : label;
  });
  const text = named.length <= MAX_REASON ? named : `${named.slice(0, MAX_REASON - 3)}...`;
  return text[0]!.toUpperCase() + text.slice(1);
}
