import { IDEMPOTENCY_CLAIM_MARGIN_MS, type HttpReply } from "@sched/proto";
import { createHash } from "node:crypto";

/** What the store remembers of one (API key, Idempotency-Key) pair. */
export type IdempotencyRecord =
  /** `token` names the request holding the claim, so only it can settle the record. */
  | { state: "in_progress"; fingerprint: string; token: string }
  /** `reply`: the answer as the gateway sent it, kept to be sent again for a repeated key. */
  | { state: "done"; fingerprint: string; token: string; reply: HttpReply };

export type IdempotencyDecision =
  | { kind: "replay"; reply: HttpReply }
  | { kind: "in_progress" }
  | { kind: "reused" };

/** What a request finding a record under its key gets (api-decisions parts 5 and 6). */
export function decide(existing: IdempotencyRecord, fingerprint: string): IdempotencyDecision {
  if (existing.fingerprint !== fingerprint) return { kind: "reused" };
  if (existing.state === "in_progress") return { kind: "in_progress" };
  return { kind: "replay", reply: existing.reply };
}

/**
 * Only successes are kept: a refused request changed nothing, so sending it
 * again simply runs it again, as Stripe does for requests that failed validation.
 */
export function isKept(reply: HttpReply): boolean {
  return reply.status >= 200 && reply.status < 300;
}

/** Store key of a pair; the client's key is hashed so its length and characters never matter. */
export function idempotencyStoreKey(apiKeyId: string, idempotencyKey: string): string {
  return `${apiKeyId}:${createHash("sha256").update(idempotencyKey).digest("base64url")}`;
}

/**
 * A claim expires with the request's deadline (the bus deadline: the
 * service drops the request at it too), plus a margin. A request that dies
 * holding its claim, with its gateway killed or its store unreachable
 * before release, blocks a retry for no longer than that.
 */
export function claimLeaseMs(busTimeoutMs: number): number {
  return busTimeoutMs + IDEMPOTENCY_CLAIM_MARGIN_MS;
}
