import { idempotencyInProgress, idempotencyKeyReused } from "@sched/errors";
import { randomBase62 } from "@sched/ids";
import type { Logger } from "@sched/logging";
import { IDEMPOTENCY_FINGERPRINT_HEADER, IDEMPOTENCY_RETENTION_MS, type HttpReply } from "@sched/proto";
import { decide, idempotencyStoreKey, isKept } from "../../domain/idempotency.js";
import type { IdempotencyStore } from "./store.js";

export interface IdempotentRequest {
  apiKeyId: string;
  idempotencyKey: string;
  fingerprint: string;
  leaseMs: number;
}

/**
 * Sends a POST at most once per (API key, Idempotency-Key) across every
 * endpoint and gateway replica: a repeat gets the first success again, a
 * concurrent one 409, another request under the same key 422. The request
 * goes on with its fingerprint in a bus header: a service that writes keeps
 * it, with the key and its answer, in the transaction of its write
 * (`@sched/db/idempotent-writes`), so a retry this store no longer
 * remembers (the claim of a gateway killed after the service committed has
 * expired; Redis was flushed, unreachable or its seal key rotated) is
 * replayed there instead of written twice. When the store cannot be reached
 * the request goes through with only that guard. The outage is logged once
 * by the Redis link (outbound/redisLink.ts), not here on every POST.
 */
export async function forwardOnce(
  store: IdempotencyStore,
  logger: Logger,
  request: IdempotentRequest,
  forwardWith: (headers: Record<string, string>) => Promise<HttpReply>,
): Promise<{ reply: HttpReply; replayed: boolean }> {
  const forward = () => forwardWith({ [IDEMPOTENCY_FINGERPRINT_HEADER]: request.fingerprint });
  const id = idempotencyStoreKey(request.apiKeyId, request.idempotencyKey);
  const token = randomBase62(16);
  let existing;
  try {
    existing = await store.claim(id, { state: "in_progress", fingerprint: request.fingerprint, token }, request.leaseMs);
  } catch (err) {
    logger.debug({ err: (err as Error).message }, "idempotency store unavailable; forwarding without its guard");
    return { reply: await forward(), replayed: false };
  }
  if (existing) {
    const decision = decide(existing.record, request.fingerprint);
    if (decision.kind === "reused") throw idempotencyKeyReused();
    // The claim of a request that died mid-flight expires with its lease: retrying then goes through.
    if (decision.kind === "in_progress") throw idempotencyInProgress(existing.expiresInMs);
    return { reply: decision.reply, replayed: true };
  }
  let reply: HttpReply;
  try {
    reply = await forward();
  } catch (err) {
    await settle(logger, () => store.release(id, token));
    throw err;
  }
  await settle(logger, () =>
    isKept(reply)
      ? store.complete(id, { state: "done", fingerprint: request.fingerprint, token, reply }, IDEMPOTENCY_RETENTION_MS)
      : store.release(id, token),
  );
  return { reply, replayed: false };
}

/** The answer is already decided; a store that fails now only loses the record. */
async function settle(logger: Logger, write: () => Promise<void>): Promise<void> {
  try {
    await write();
  } catch (err) {
    logger.debug({ err: (err as Error).message }, "idempotency record not saved");
  }
}
