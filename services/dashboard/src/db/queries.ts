import { namedStatement, runNamed, type Knex } from "@sched/db";
import type { Mode, ServedRequest } from "@sched/proto";

const asDate = (value: Date | string): Date => (value instanceof Date ? value : new Date(value));

// ---- sign-in links --------------------------------------------------------

export async function insertSignInLink(db: Knex, link: { tokenHash: string; userId: string; expiresAt: Date }): Promise<void> {
  await db("sign_in_links").insert({ token_hash: link.tokenHash, user_id: link.userId, expires_at: link.expiresAt });
}

/** The user of a link that still works, without using it up (the page that asks to confirm). */
export async function findUsableLink(db: Knex, tokenHash: string): Promise<string | undefined> {
  const row = (await db("sign_in_links").where({ token_hash: tokenHash }).whereNull("used_at").where("expires_at", ">", db.fn.now()).first("user_id")) as { user_id: string } | undefined;
  return row?.user_id;
}

/** Uses a link up and returns its user; a used, expired or unknown link gives undefined. One statement, so two racing uses get one user. */
export async function consumeSignInLink(db: Knex, tokenHash: string): Promise<string | undefined> {
  const [row] = (await db("sign_in_links")
    .where({ token_hash: tokenHash })
    .whereNull("used_at")
    .where("expires_at", ">", db.fn.now())
    .update({ used_at: db.fn.now() })
    .returning(["user_id"])) as { user_id: string }[];
  return row?.user_id;
}

// ---- sessions -------------------------------------------------------------

export interface StoredSession {
  tokenHash: string;
  userId: string;
  csrfToken: string;
  mode: Mode;
  createdAt: Date;
  lastSeenAt: Date;
}

interface SessionRow {
  token_hash: string;
  user_id: string;
  csrf_token: string;
  mode: Mode;
  created_at: Date | string;
  last_seen_at: Date | string;
}

export async function insertSession(db: Knex, session: { tokenHash: string; userId: string; csrfToken: string }): Promise<void> {
  await db("sessions").insert({ token_hash: session.tokenHash, user_id: session.userId, csrf_token: session.csrfToken });
}

export async function findSession(db: Knex, tokenHash: string): Promise<StoredSession | undefined> {
  const row = (await db("sessions").where({ token_hash: tokenHash }).first()) as SessionRow | undefined;
  if (!row) return undefined;
  return {
    tokenHash: row.token_hash,
    userId: row.user_id,
    csrfToken: row.csrf_token,
    mode: row.mode,
    createdAt: asDate(row.created_at),
    lastSeenAt: asDate(row.last_seen_at),
  };
}

export async function touchSession(db: Knex, tokenHash: string): Promise<void> {
  await db("sessions").where({ token_hash: tokenHash }).update({ last_seen_at: db.fn.now() });
}

export async function setSessionMode(db: Knex, tokenHash: string, mode: Mode): Promise<void> {
  await db("sessions").where({ token_hash: tokenHash }).update({ mode });
}

export async function deleteSession(db: Knex, tokenHash: string): Promise<void> {
  await db("sessions").where({ token_hash: tokenHash }).delete();
}

// ---- sign-in attempts -----------------------------------------------------

/** Records an attempt and returns how many there were in the window before it, by address and by e-mail. */
export async function countAndRecordAttempt(db: Knex, attempt: { address: string; email?: string }, since: Date): Promise<{ byAddress: number; byEmail?: number }> {
  return db.transaction(async (trx) => {
    const byAddress = (await trx("sign_in_attempts").where({ address: attempt.address }).where("at", ">=", since).count({ n: "*" }).first()) as { n: number | string };
    const byEmail = attempt.email === undefined ? undefined : ((await trx("sign_in_attempts").where({ email: attempt.email }).where("at", ">=", since).count({ n: "*" }).first()) as { n: number | string });
    await trx("sign_in_attempts").insert({ address: attempt.address, email: attempt.email ?? null });
    return { byAddress: Number(byAddress.n), ...(byEmail ? { byEmail: Number(byEmail.n) } : {}) };
  });
}

// ---- request log ----------------------------------------------------------

/**
 * Stores a batch once: a batch id seen before stores nothing. One statement:
 * the batch travels as one JSON parameter and Postgres makes the rows, where
 * a multi-row insert built here cost more CPU than the requests it records.
 */
const STORE_REQUEST_BATCH = namedStatement(
  "store_request_batch",
  `
  with batch as (insert into request_log_batches (batch_id) values (?) on conflict (batch_id) do nothing returning batch_id),
  stored as (
    insert into request_log (at, request_id, api_key_id, user_id, mode, method, path, status, duration_ms)
    select r.at, r."requestId", r."apiKeyId", r."userId", r.mode, r.method, r.path, r.status, r."durationMs"
    from jsonb_to_recordset(?::jsonb) as r(at timestamptz, "requestId" text, "apiKeyId" text, "userId" text, mode text, method text, path text, status smallint, "durationMs" integer)
    where exists (select from batch)
  )
  select exists (select from batch) as stored`,
);

/** Sent by name straight to a pooled connection (runNamed): knex would build the statement anew for every batch. */
export async function storeRequestBatch(db: Knex, batchId: string, requests: readonly ServedRequest[]): Promise<boolean> {
  const [row] = await runNamed<{ stored: boolean }>(db, STORE_REQUEST_BATCH, [batchId, JSON.stringify(requests)]);
  return row!.stored;
}

export interface LoggedRequest {
  at: Date;
  requestId: string;
  apiKeyId: string;
  method: string;
  path: string;
  status: number;
  durationMs: number;
}

interface LogRow {
  at: Date | string;
  request_id: string;
  api_key_id: string;
  method: string;
  path: string;
  status: number;
  duration_ms: number;
}

const toLogged = (r: LogRow): LoggedRequest => ({
  at: asDate(r.at),
  requestId: r.request_id,
  apiKeyId: r.api_key_id,
  method: r.method,
  path: r.path,
  status: Number(r.status),
  durationMs: Number(r.duration_ms),
});

export interface LogOwner {
  userId: string;
  mode: Mode;
}

/** One user's requests in one mode since `since`, newest first, optionally of one status range or request id. */
export async function listRequests(
  db: Knex,
  owner: LogOwner,
  filter: { since: Date; status?: { min: number; max: number } | undefined; requestId?: string; limit: number },
): Promise<LoggedRequest[]> {
  const query = db("request_log").where({ user_id: owner.userId, mode: owner.mode }).where("at", ">=", filter.since);
  if (filter.status) query.whereBetween("status", [filter.status.min, filter.status.max]);
  if (filter.requestId !== undefined) query.where({ request_id: filter.requestId });
  const rows = (await query.orderBy("at", "desc").limit(filter.limit).select("at", "request_id", "api_key_id", "method", "path", "status", "duration_ms")) as LogRow[];
  return rows.map(toLogged);
}

export interface DailyUsage {
  apiKeyId: string;
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  requests: number;
  clientErrors: number;
  rateLimited: number;
  serverErrors: number;
}

/** Requests per key and UTC day since `since`, newest day first. */
export async function usageByKeyAndDay(db: Knex, owner: LogOwner, since: Date): Promise<DailyUsage[]> {
  const rows = (await db("request_log")
    .where({ user_id: owner.userId, mode: owner.mode })
    .where("at", ">=", since)
    .select(
      "api_key_id",
      db.raw("to_char(at at time zone 'UTC', 'YYYY-MM-DD') as day"),
      db.raw("count(*)::int as requests"),
      db.raw("(count(*) filter (where status between 400 and 499))::int as client_errors"),
      db.raw("(count(*) filter (where status = 429))::int as rate_limited"),
      db.raw("(count(*) filter (where status >= 500))::int as server_errors"),
    )
    .groupBy("api_key_id", "day")
    .orderBy([
      { column: "day", order: "desc" },
      { column: "api_key_id", order: "asc" },
    ])) as Array<{ api_key_id: string; day: string; requests: number; client_errors: number; rate_limited: number; server_errors: number }>;
  return rows.map((r) => ({
    apiKeyId: r.api_key_id,
    day: r.day,
    requests: Number(r.requests),
    clientErrors: Number(r.client_errors),
    rateLimited: Number(r.rate_limited),
    serverErrors: Number(r.server_errors),
  }));
}

/** When each of a user's keys was last used, as far as the log still knows. */
export async function lastUseByKey(db: Knex, userId: string): Promise<Map<string, Date>> {
  const rows = (await db("request_log").where({ user_id: userId }).groupBy("api_key_id").select("api_key_id", db.raw("max(at) as last_at"))) as Array<{ api_key_id: string; last_at: Date | string }>;
  return new Map(rows.map((r) => [r.api_key_id, asDate(r.last_at)]));
}

// ---- retention ------------------------------------------------------------

/** Drops what is past keeping: log lines and batch ids older than `logBefore`, dead links, sessions and attempts. */
export async function pruneExpired(db: Knex, cutoffs: { logBefore: Date; sessionsSeenBefore: Date; attemptsBefore: Date }): Promise<void> {
  await db("request_log").where("at", "<", cutoffs.logBefore).delete();
  await db("request_log_batches").where("stored_at", "<", cutoffs.logBefore).delete();
  await db("sign_in_links").where("expires_at", "<", db.fn.now()).delete();
  await db("sessions").where("last_seen_at", "<", cutoffs.sessionsSeenBefore).delete();
  await db("sign_in_attempts").where("at", "<", cutoffs.attemptsBefore).delete();
}
