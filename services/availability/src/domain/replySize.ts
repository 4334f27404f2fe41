import type { RecommendationBody } from "@sched/proto";

const bytesOf = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));

/**
 * The recommendation with its last (lowest ranked) slots left out until its
 * JSON takes at most `budget` bytes; undefined: no limit. Each slot names
 * everyone inside their working hours, so 50 slots for 101 people with long
 * addresses come to 1.3 MB. One slot always stays: `slots` is empty only
 * when nothing was found (`emptyReason`).
 */
export function fitRecommendation(body: RecommendationBody, budget: number | undefined): RecommendationBody {
  if (budget === undefined) return body;
  let size = bytesOf(body);
  let kept = body.slots.length;
  while (size > budget && kept > 1) {
    kept -= 1;
    size -= bytesOf(body.slots[kept]) + 1;
  }
  return kept === body.slots.length ? body : { ...body, slots: body.slots.slice(0, kept) };
}
