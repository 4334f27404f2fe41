import type { Knex } from "knex";
import { idempotencyInProgress, idempotencyKeyReused } from "@sched/errors";
import { requestFingerprint, type Sealer } from "@sched/ids";
import { IDEMPOTENCY_CLAIM_MARGIN_MS, IDEMPOTENT_REPLAYED_HEADER, type HttpReply } from "@sched/proto";
import { randomBytes } from "node:crypto";
import { requireCaller, type RequestContext } from "@sched/bus";
import { readGatewayFingerprint, readIdempotencyKey } from "./requestHeaders.js";
import { claimIdempotencyKey, completeIdempotencyKey, dropIdempotencyRecord, findIdempotencyRecord, releaseIdempotencyKey, replaceStoredReply } from "./records.js";
import { bodyAtRest, bodyFromRest } from "./storedBody.js";

/** The public request a write answers, as its route sees it: what a request without the gateway's fingerprint is judged by. */
export interface RouteRequest {
  method: string;
  path: string;
  body: unknown;
}

export interface WriteOnceOptions<R> {
  /**
   * Completes the answer after the commit, with what cannot be in the
   * transaction (a question to another service); the stored answer is then
   * replaced by the finished one. A request that dies between the two
   * leaves the answer as it was at the commit, which a retry then gets.
   */
  finish?: (reply: R) => Promise<R>;
  /**
   * Seals the stored body, for an answer carrying a secret shown once (a
   * webhook signing secret), so it never rests in clear; bound to the key
   * and fingerprint. A body that no longer opens (the key was rotated) counts
   * as expired: the request runs again, as at the gateway.
   */
  sealer?: Sealer;
}

/** One (API key, Idempotency-Key) pair and the request made under it. */
interface KeyedRequest {
  apiKeyId: string;
  key: string;
  fingerprint: string;
}

/**
 * Runs `write` and answers what it gives; for a request with an
 * Idempotency-Key, at most once per key (api-decisions part 5), in a
 * transaction that also stores the key, the request's fingerprint and that
 * answer in the service's own `idempotency_keys` table. So a repeat that
 * reaches the service after the gateway lost its record (killed between
 * the commit and its own record, Redis flushed or unreachable, its seal
 * key rotated) gets the stored first answer, with Idempotent-Replayed,
 * instead of a second write. The fingerprint is the gateway's, computed
 * once at the edge; a request without it (another bus caller, a gateway of
 * an earlier release) is fingerprinted here from `request`. Without a key
 * `write` runs on `db` as it is, so a one-statement write costs no
 * transaction: a write of several statements opens its own (inside ours it
 * nests, as a savepoint).
 *
 * The key is claimed in its own committed statement before anything
 * happens, so a concurrent request with the key sees it in progress (409,
 * with how long the claim can last at most as Retry-After). The claim
 * expires with the request's deadline plus a margin: a request killed
 * before it could release it holds the key no longer, and one that
 * outlives its claim cannot commit. A stored reply is the answer this
 * route gave the first time, so it is one of the answers `write` may give.
 */
export async function writeOnce<R extends HttpReply>(
  db: Knex,
  ctx: RequestContext,
  request: RouteRequest,
  write: (db: Knex) => Promise<R>,
  options: WriteOnceOptions<R> = {},
): Promise<R> {
  const { finish, sealer } = options;
  const keyed = keyedRequest(ctx, request);
  if (keyed === undefined) {
    const reply = await write(db);
    return finish ? finish(reply) : reply;
  }
  const held = { apiKeyId: keyed.apiKeyId, key: keyed.key, claimToken: randomBytes(18).toString("base64url") };
  const boundTo = JSON.stringify([keyed.apiKeyId, keyed.key, keyed.fingerprint]);
  const claimMs = Math.max(0, ctx.deadline - Date.now()) + IDEMPOTENCY_CLAIM_MARGIN_MS;
  // A claim can be released or expire between our insert and our read; then we simply try again.
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await claimIdempotencyKey(db, { ...held, fingerprint: keyed.fingerprint, claimMs })) {
      let reply: R;
      try {
        reply = await db.transaction(async (trx) => {
          const written = await write(trx);
          // Our claim expired and another request with the key took it over: that one runs instead.
          if (!(await completeIdempotencyKey(trx, { ...held, status: written.status, body: bodyAtRest(written.body, sealer, boundTo) }))) throw idempotencyInProgress(claimMs);
          return written;
        });
      } catch (err) {
        await releaseIdempotencyKey(db, held).catch(() => undefined);
        throw err;
      }
      if (!finish) return reply;
      const finished = await finish(reply);
      await replaceStoredReply(db, { ...held, status: finished.status, body: bodyAtRest(finished.body, sealer, boundTo) });
      return finished;
    }
    const existing = await findIdempotencyRecord(db, keyed.apiKeyId, keyed.key);
    if (!existing) continue;
    if (existing.fingerprint !== keyed.fingerprint) throw idempotencyKeyReused();
    if (existing.state === "in_progress" || existing.responseStatus === null) throw idempotencyInProgress(existing.expiresInMs);
    const stored = bodyFromRest(existing.responseBody, sealer, boundTo);
    if (stored) return { status: existing.responseStatus, body: stored.body, headers: { [IDEMPOTENT_REPLAYED_HEADER]: "true" } } as HttpReply as R;
    // An answer that no longer opens cannot be sent again: the record goes, and the request runs again (as at the gateway).
    await dropIdempotencyRecord(db, { apiKeyId: keyed.apiKeyId, key: keyed.key, claimToken: existing.claimToken });
  }
  throw idempotencyInProgress(claimMs);
}

/** The request's key and fingerprint, or undefined without an Idempotency-Key; a malformed key is a 400 naming the header. */
function keyedRequest(ctx: RequestContext, request: RouteRequest): KeyedRequest | undefined {
  const key = readIdempotencyKey(ctx.headers);
  if (key === undefined) return undefined;
  const fingerprint = readGatewayFingerprint(ctx.headers) ?? requestFingerprint(request.method, request.path, request.body);
  return { apiKeyId: requireCaller(ctx).apiKeyId, key, fingerprint };
}
