import type { Knex } from "knex";
import { IDEMPOTENCY_RETENTION_MS } from "@sched/proto";

/** What a service's `idempotency_keys` table holds for one (API key, Idempotency-Key) pair. */
export interface IdempotencyRecord {
  fingerprint: string;
  claimToken: string;
  state: "in_progress" | "done";
  responseStatus: number | null;
  responseBody: unknown;
  /** Until the record expires: for a claim, at the latest until the key is free again. */
  expiresInMs: number;
}

/** A request's hold on its key: the pair, and the token only it knows. */
export interface HeldKey {
  apiKeyId: string;
  key: string;
  claimToken: string;
}

/**
 * Claims a key for this request, until `claimMs` from now (the request's
 * deadline and a margin): a request that dies holding its claim frees the
 * key then, with nothing written. Returns true when the claim is ours: the
 * key was free or its record or claim had expired. The unique key makes
 * concurrent claims of one key wait for each other, so only one of them
 * ever wins.
 */
export async function claimIdempotencyKey(db: Knex, c: HeldKey & { fingerprint: string; claimMs: number }): Promise<boolean> {
  const result = await db.raw(
    `insert into idempotency_keys (api_key_id, idem_key, fingerprint, claim_token, state, claimed_at, expires_at)
     values (?, ?, ?, ?, 'in_progress', now(), now() + make_interval(secs => ?))
     on conflict (api_key_id, idem_key) do update
       set fingerprint = excluded.fingerprint, claim_token = excluded.claim_token, state = 'in_progress',
           response_status = null, response_body = null, claimed_at = excluded.claimed_at, expires_at = excluded.expires_at
       where idempotency_keys.expires_at <= now()
     returning claim_token`,
    [c.apiKeyId, c.key, c.fingerprint, c.claimToken, c.claimMs / 1_000],
  );
  return (result.rows as { claim_token: string }[]).some((r) => r.claim_token === c.claimToken);
}

export async function findIdempotencyRecord(db: Knex, apiKeyId: string, key: string): Promise<IdempotencyRecord | undefined> {
  const row = (await db("idempotency_keys")
    .select("fingerprint", "claim_token", "state", "response_status", "response_body", db.raw("ceil(extract(epoch from expires_at - now()) * 1000)::float8 as expires_in_ms"))
    .where({ api_key_id: apiKeyId, idem_key: key })
    .andWhere("expires_at", ">", db.fn.now())
    .first()) as
    | { fingerprint: string; claim_token: string; state: "in_progress" | "done"; response_status: number | null; response_body: unknown; expires_in_ms: number }
    | undefined;
  return (
    row && { fingerprint: row.fingerprint, claimToken: row.claim_token, state: row.state, responseStatus: row.response_status, responseBody: row.response_body, expiresInMs: row.expires_in_ms }
  );
}

/** Stores the response with the change it describes, kept for the key's lifetime; false when the claim was lost. */
export async function completeIdempotencyKey(trx: Knex.Transaction, c: HeldKey & { status: number; body: unknown }): Promise<boolean> {
  const updated = await trx("idempotency_keys")
    .where({ api_key_id: c.apiKeyId, idem_key: c.key, claim_token: c.claimToken, state: "in_progress" })
    .update({
      state: "done",
      response_status: c.status,
      response_body: JSON.stringify(c.body),
      expires_at: trx.raw("now() + make_interval(secs => ?)", [IDEMPOTENCY_RETENTION_MS / 1_000]),
    });
  return updated === 1;
}

/** Replaces the reply stored by our own request, once finished after its commit. */
export async function replaceStoredReply(db: Knex, c: HeldKey & { status: number; body: unknown }): Promise<void> {
  await db("idempotency_keys")
    .where({ api_key_id: c.apiKeyId, idem_key: c.key, claim_token: c.claimToken, state: "done" })
    .update({ response_status: c.status, response_body: JSON.stringify(c.body) });
}

/** Drops a finished record whose answer cannot be sent again, unless another request has replaced it meanwhile. */
export async function dropIdempotencyRecord(db: Knex, c: HeldKey): Promise<void> {
  await db("idempotency_keys").where({ api_key_id: c.apiKeyId, idem_key: c.key, claim_token: c.claimToken, state: "done" }).delete();
}

/** Gives a claim back after a failure, so a retry with the key can run. */
export async function releaseIdempotencyKey(db: Knex, c: HeldKey): Promise<void> {
  await db("idempotency_keys").where({ api_key_id: c.apiKeyId, idem_key: c.key, claim_token: c.claimToken, state: "in_progress" }).delete();
}

/** Deletes up to `batch` expired records; answers how many went. */
export async function deleteExpiredIdempotencyKeys(db: Knex, batch = 5_000): Promise<number> {
  const result = await db.raw(
    "delete from idempotency_keys where (api_key_id, idem_key) in (select api_key_id, idem_key from idempotency_keys where expires_at <= now() limit ?)",
    [batch],
  );
  return (result as { rowCount?: number }).rowCount ?? 0;
}
