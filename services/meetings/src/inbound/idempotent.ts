import type { Knex } from "@sched/db";
import { idempotencyInProgress, idempotencyKeyReused } from "@sched/errors";
import { randomBase62 } from "@sched/ids";
import { IDEMPOTENCY_CLAIM_MARGIN_MS, IDEMPOTENT_REPLAYED_HEADER, type HttpReply } from "@sched/proto";
import { claimIdempotencyKey, completeIdempotencyKey, findIdempotencyRecord, releaseIdempotencyKey } from "../db/queries.js";

export interface IdempotencyClaim {
  apiKeyId: string;
  key: string;
  fingerprint: string;
}

/**
 * Runs `write` at most once per key (api-decisions part 5). The key is
 * claimed in its own committed statement before anything happens, so a
 * concurrent request with the key sees it in progress (409, with how long
 * the claim can last at most as Retry-After); the response is stored in the
 * same transaction as the change, so a replay always matches what was
 * committed. The claim expires with the request's `deadline` plus a margin:
 * a request killed before it could release it holds the key no longer, and
 * one that outlives its claim cannot commit. Returns the stored reply to
 * replay, or undefined after writing. A stored reply is the answer this
 * route gave the first time, so it is one of the answers `reply` may be.
 */
export async function runOnce<R extends HttpReply>(
  db: Knex,
  claim: IdempotencyClaim,
  deadline: number,
  reply: R,
  write: (trx: Knex.Transaction) => Promise<void>,
): Promise<R | undefined> {
  const claimToken = randomBase62(24);
  const mine = { apiKeyId: claim.apiKeyId, key: claim.key, claimToken };
  const claimMs = Math.max(0, deadline - Date.now()) + IDEMPOTENCY_CLAIM_MARGIN_MS;
  // A claim can be released or expire between our insert and our read; then we simply try again.
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await claimIdempotencyKey(db, { ...mine, fingerprint: claim.fingerprint, claimMs })) {
      try {
        await db.transaction(async (trx) => {
          await write(trx);
          // Our claim expired and another request with the key took it over: that one runs instead.
          if (!(await completeIdempotencyKey(trx, { ...mine, status: reply.status, body: reply.body }))) throw idempotencyInProgress(claimMs);
        });
      } catch (err) {
        await releaseIdempotencyKey(db, mine).catch(() => undefined);
        throw err;
      }
      return undefined;
    }
    const existing = await findIdempotencyRecord(db, claim.apiKeyId, claim.key);
    if (!existing) continue;
    if (existing.fingerprint !== claim.fingerprint) {
      throw idempotencyKeyReused();
    }
    if (existing.state === "in_progress" || existing.responseStatus === null) throw idempotencyInProgress(existing.expiresInMs);
    return { status: existing.responseStatus, body: existing.responseBody, headers: { [IDEMPOTENT_REPLAYED_HEADER]: "true" } } as HttpReply as R;
  }
  throw idempotencyInProgress(claimMs);
}
