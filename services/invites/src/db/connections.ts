import type { Knex } from "@sched/db";
import type { CalendarProvider, ConnectionStatus } from "@sched/proto";

export interface ConnectionRecord {
  id: string;
  userId: string;
  provider: CalendarProvider;
  accountEmail: string | null;
  sealedTokens: string;
  status: ConnectionStatus;
  createdAt: Date;
  serverUrl: string | null;
  isDefault: boolean;
  /** Null: the provider's default calendars. */
  busyCalendars: string[] | null;
}

interface ConnectionRow {
  id: string;
  user_id: string;
  provider: CalendarProvider;
  account_email: string | null;
  sealed_tokens: string;
  status: ConnectionStatus;
  created_at: Date | string;
  server_url: string | null;
  is_default: boolean;
  busy_calendars: string[] | null;
}

const toRecord = (row: ConnectionRow): ConnectionRecord => ({
  id: row.id,
  userId: row.user_id,
  provider: row.provider,
  accountEmail: row.account_email,
  sealedTokens: row.sealed_tokens,
  status: row.status,
  createdAt: row.created_at instanceof Date ? row.created_at : new Date(row.created_at),
  serverUrl: row.server_url,
  isDefault: row.is_default,
  busyCalendars: row.busy_calendars,
});

export async function listConnections(db: Knex, userId: string): Promise<ConnectionRecord[]> {
  const rows = (await db("calendar_connections").where({ user_id: userId }).orderBy([{ column: "created_at", order: "desc" }, { column: "id", order: "desc" }])) as ConnectionRow[];
  return rows.map(toRecord);
}

/** The connection invites and busy time go through: the user's active one for the provider. */
export async function activeConnection(db: Knex, userId: string, provider: CalendarProvider = "google"): Promise<ConnectionRecord | undefined> {
  const row = (await db("calendar_connections").where({ user_id: userId, provider, status: "active" }).first()) as ConnectionRow | undefined;
  return row ? toRecord(row) : undefined;
}

/** The active connections of several users, every provider. */
export async function activeConnections(db: Knex, userIds: readonly string[]): Promise<ConnectionRecord[]> {
  if (userIds.length === 0) return [];
  const rows = (await db("calendar_connections").whereIn("user_id", userIds).andWhere({ status: "active" })) as ConnectionRow[];
  return rows.map(toRecord);
}

/** One connection of the user; undefined for anyone else's. */
/** Whether the user has a connection whose busy time is read (one that is not broken). */
export async function hasActiveConnection(db: Knex, userId: string): Promise<boolean> {
  return (await db("calendar_connections").where({ user_id: userId, status: "active" }).first("id")) !== undefined;
}

export async function findConnection(db: Knex, userId: string, connectionId: string): Promise<ConnectionRecord | undefined> {
  const row = (await db("calendar_connections").where({ id: connectionId, user_id: userId }).first()) as ConnectionRow | undefined;
  return row ? toRecord(row) : undefined;
}

/** A connection by id alone, for work that is no user's request. */
export async function connectionById(db: Knex, connectionId: string): Promise<ConnectionRecord | undefined> {
  const row = (await db("calendar_connections").where({ id: connectionId }).first()) as ConnectionRow | undefined;
  return row ? toRecord(row) : undefined;
}

/** The connection the user chose for invites, when it works. */
export async function defaultConnection(db: Knex, userId: string): Promise<ConnectionRecord | undefined> {
  const row = (await db("calendar_connections").where({ user_id: userId, is_default: true, status: "active" }).first()) as ConnectionRow | undefined;
  return row ? toRecord(row) : undefined;
}

/** Changes which calendars count as busy, and makes the connection the user's default (and no other). */
export async function updateConnectionSettings(db: Knex, userId: string, connectionId: string, change: { busyCalendars?: string[] | null; makeDefault?: boolean }): Promise<ConnectionRecord | undefined> {
  return db.transaction(async (trx) => {
    if (change.makeDefault) await trx("calendar_connections").where({ user_id: userId, is_default: true }).whereNot({ id: connectionId }).update({ is_default: false });
    const rows = (await trx("calendar_connections")
      .where({ id: connectionId, user_id: userId })
      .update({
        ...(change.busyCalendars !== undefined ? { busy_calendars: change.busyCalendars } : {}),
        ...(change.makeDefault ? { is_default: true } : {}),
        updated_at: trx.fn.now(),
      })
      .returning("*")) as ConnectionRow[];
    return rows[0] ? toRecord(rows[0]) : undefined;
  });
}

/**
 * Stores a grant for the user and provider. Connecting again replaces the
 * grant (and mends a broken connection) under a new id; `seal` gets the id
 * the tokens are bound to.
 */
export async function upsertConnection(
  db: Knex,
  input: { id: string; userId: string; provider: CalendarProvider; accountEmail: string | null; serverUrl?: string },
  seal: (connectionId: string) => string,
): Promise<ConnectionRecord> {
  const serverUrl = input.serverUrl ?? null;
  const rows = (await db("calendar_connections")
    .insert({ id: input.id, user_id: input.userId, provider: input.provider, account_email: input.accountEmail, sealed_tokens: seal(input.id), status: "active", server_url: serverUrl })
    .onConflict(["user_id", "provider"])
    .merge({ id: input.id, account_email: input.accountEmail, sealed_tokens: seal(input.id), status: "active", server_url: serverUrl, busy_calendars: null, created_at: db.fn.now(), updated_at: db.fn.now() })
    .returning("*")) as ConnectionRow[];
  return toRecord(rows[0]!);
}

export async function updateSealedTokens(db: Knex, connectionId: string, sealedTokens: string): Promise<void> {
  await db("calendar_connections").where({ id: connectionId }).update({ sealed_tokens: sealedTokens, updated_at: db.fn.now() });
}

export async function markBroken(db: Knex, connectionId: string): Promise<void> {
  await db("calendar_connections").where({ id: connectionId }).update({ status: "broken", updated_at: db.fn.now() });
}

export async function deleteConnection(db: Knex, userId: string, connectionId: string): Promise<boolean> {
  return (await db("calendar_connections").where({ id: connectionId, user_id: userId }).delete()) > 0;
}

// ---- consent in progress -------------------------------------------------------

/** A consent in progress: who started it, for which provider, and whether in the dashboard (its callback then sends the browser back there). */
export interface OAuthState {
  stateHash: string;
  userId: string;
  provider: CalendarProvider;
  fromDashboard: boolean;
  expiresAt: Date;
}

export async function saveOAuthState(db: Knex, state: OAuthState): Promise<void> {
  await db("oauth_states").where("expires_at", "<", db.fn.now()).delete();
  await db("oauth_states").insert({ state_hash: state.stateHash, user_id: state.userId, expires_at: state.expiresAt, provider: state.provider, from_dashboard: state.fromDashboard });
}

/** Takes a state once: whose it is and where it started, or undefined when unknown, used, expired or another provider's. */
export async function takeOAuthState(db: Knex, stateHash: string, provider: CalendarProvider): Promise<{ userId: string; fromDashboard: boolean } | undefined> {
  const rows = (await db("oauth_states")
    .where({ state_hash: stateHash, provider })
    .andWhere("expires_at", ">", db.fn.now())
    .delete()
    .returning(["user_id", "from_dashboard"])) as Array<{ user_id: string; from_dashboard: boolean }>;
  const row = rows[0];
  return row ? { userId: row.user_id, fromDashboard: row.from_dashboard } : undefined;
}
