import type { Knex } from "@sched/db";
import type { Caller, KeyRateLimits, Mode, Preferences, Scope, WorkingHoursEntry } from "@sched/proto";
import { preferencesView } from "../domain/preferences.js";
import type { Announce } from "../outbound/events.js";
import type { ProfileChanges, StoredUser } from "../domain/users.js";

/** The unique constraint that makes a second user with the same e-mail impossible. */
export const UNIQUE_EMAIL_CONSTRAINT = "users_email_key";

interface UserRow {
  id: string;
  email: string;
  name: string;
  timezone: string;
  working_hours: WorkingHoursEntry[] | string;
  preferences: Preferences | string;
  created_at: Date | string;
  updated_at: Date | string;
}

const USER_COLUMNS = ["id", "email", "name", "timezone", "working_hours", "preferences", "created_at", "updated_at"];

const asDate = (value: Date | string): Date => (value instanceof Date ? value : new Date(value));
const asJson = <T>(value: T | string): T => (typeof value === "string" ? (JSON.parse(value) as T) : value);

// jsonb keeps its own key order; replies spell entries as the contract does.
const workingHoursOf = (stored: UserRow["working_hours"]): WorkingHoursEntry[] => asJson(stored).map((e) => ({ day: e.day, start: e.start, end: e.end }));

function toStoredUser(row: UserRow): StoredUser {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    timezone: row.timezone,
    workingHours: workingHoursOf(row.working_hours),
    preferences: preferencesView(asJson(row.preferences)),
    createdAt: asDate(row.created_at),
    updatedAt: asDate(row.updated_at),
  };
}

/** Inserts a user and, in the same transaction, the outbox row `announce` makes of it. */
export async function insertUser(
  db: Knex,
  user: { id: string; email: string; name: string; timezone: string },
  announce: Announce,
): Promise<StoredUser> {
  return db.transaction(async (trx) => {
    const [row] = (await trx("users").insert(user).returning(USER_COLUMNS)) as UserRow[];
    const stored = toStoredUser(row!);
    await announce(trx, stored);
    return stored;
  });
}

export async function findUser(db: Knex, id: string): Promise<StoredUser | undefined> {
  const row = (await db("users").where({ id }).first(USER_COLUMNS)) as UserRow | undefined;
  return row ? toStoredUser(row) : undefined;
}

/** `email` in its stored (lower-case) form. */
export async function findUsersByEmail(db: Knex, email: string): Promise<StoredUser[]> {
  const rows = (await db("users").where({ email }).select(USER_COLUMNS).orderBy("id")) as UserRow[];
  return rows.map(toStoredUser);
}

/** Users with any of the ids or (stored-form) e-mails, in one query. */
export async function lookupUsers(db: Knex, by: { ids: string[]; emails: string[] }): Promise<StoredUser[]> {
  if (by.ids.length === 0 && by.emails.length === 0) return [];
  const rows = (await db("users")
    .select(USER_COLUMNS)
    .where((q) => {
      if (by.ids.length > 0) q.orWhereIn("id", by.ids);
      if (by.emails.length > 0) q.orWhereIn("email", by.emails);
    })
    .orderBy("id")) as UserRow[];
  return rows.map(toStoredUser);
}

/**
 * Applies the changes `decide` makes of the current user, with the row
 * locked so that concurrent updates apply one after the other, and the
 * outbox row `announce` makes of the result. Nothing is written when
 * `decide` returns no change.
 */
export async function changeUser(
  db: Knex,
  id: string,
  decide: (current: StoredUser) => ProfileChanges,
  announce: Announce,
): Promise<{ user: StoredUser; changed: boolean } | undefined> {
  return db.transaction(async (trx) => {
    const row = (await trx("users").where({ id }).forUpdate().first(USER_COLUMNS)) as UserRow | undefined;
    if (!row) return undefined;
    const changes = decide(toStoredUser(row));
    if (Object.keys(changes).length === 0) return { user: toStoredUser(row), changed: false };
    const [updated] = (await trx("users")
      .where({ id })
      .update({
        ...(changes.name !== undefined ? { name: changes.name } : {}),
        ...(changes.timezone !== undefined ? { timezone: changes.timezone } : {}),
        ...(changes.workingHours !== undefined ? { working_hours: JSON.stringify(changes.workingHours) } : {}),
        ...(changes.preferences !== undefined ? { preferences: JSON.stringify(changes.preferences) } : {}),
        updated_at: trx.raw("clock_timestamp()"),
      })
      .returning(USER_COLUMNS)) as UserRow[];
    const user = toStoredUser(updated!);
    await announce(trx, user);
    return { user, changed: true };
  });
}

/** A key as the admin API shows it at creation (the key itself is never stored). */
export interface StoredApiKey {
  id: string;
  mode: Mode;
  scopes: Scope[];
  name: string | null;
  createdAt: Date;
}

export async function insertApiKey(
  db: Knex,
  key: { id: string; userId: string; keyHash: string; hint: string; lastFour: string; mode: Mode; scopes: Scope[]; name: string | null },
): Promise<StoredApiKey> {
  const [row] = (await db("api_keys")
    .insert({
      id: key.id,
      user_id: key.userId,
      key_hash: key.keyHash,
      hint: key.hint,
      last_four: key.lastFour,
      mode: key.mode,
      scopes: JSON.stringify(key.scopes),
      name: key.name,
    })
    .returning(["id", "mode", "scopes", "name", "created_at"])) as { id: string; mode: Mode; scopes: Scope[] | string; name: string | null; created_at: Date | string }[];
  return { id: row!.id, mode: row!.mode, scopes: asJson(row!.scopes), name: row!.name, createdAt: asDate(row!.created_at) };
}

/** Who an unrevoked key acts for; undefined for an unknown or revoked key. */
export async function findCallerByKeyHash(db: Knex, keyHash: string): Promise<Caller | undefined> {
  const row = (await db("api_keys as k")
    .join("users as u", "u.id", "k.user_id")
    .where("k.key_hash", keyHash)
    .whereNull("k.revoked_at")
    .first("k.id as api_key_id", "k.mode", "k.scopes", "k.rate_limit_standard", "k.rate_limit_ai", "u.id as user_id", "u.email", "u.timezone", "u.working_hours")) as
    | (Pick<ApiKeyRow, "mode" | "scopes" | "rate_limit_standard" | "rate_limit_ai"> & Pick<UserRow, "email" | "timezone" | "working_hours"> & { api_key_id: string; user_id: string })
    | undefined;
  if (!row) return undefined;
  return {
    userId: row.user_id,
    email: row.email,
    timezone: row.timezone,
    mode: row.mode,
    scopes: asJson(row.scopes),
    apiKeyId: row.api_key_id,
    rateLimits: rateLimitsOf(row),
    workingHours: workingHoursOf(row.working_hours),
  };
}

interface ApiKeyRow {
  id: string;
  key_hash: string;
  mode: Mode;
  scopes: Scope[] | string;
  name: string | null;
  rate_limit_standard: number | null;
  rate_limit_ai: number | null;
  created_at: Date | string;
  revoked_at: Date | string | null;
}

const API_KEY_COLUMNS = ["id", "key_hash", "mode", "scopes", "name", "rate_limit_standard", "rate_limit_ai", "created_at", "revoked_at"];

const rateLimitsOf = (row: Pick<ApiKeyRow, "rate_limit_standard" | "rate_limit_ai">): KeyRateLimits => ({
  standardPerMinute: row.rate_limit_standard,
  aiPerMinute: row.rate_limit_ai,
});

/** A key's settings as the admin API shows them, with its hash for the gateways' caches. */
export interface ApiKeySettings extends StoredApiKey {
  keyHash: string;
  rateLimits: KeyRateLimits;
  revokedAt: Date | null;
}

/**
 * Sets a key's own limits: a number replaces, null returns to the
 * deployment's default, undefined leaves that bucket as it is.
 */
export async function updateApiKeyLimits(
  db: Knex,
  id: string,
  limits: { standardPerMinute?: number | null; aiPerMinute?: number | null },
): Promise<ApiKeySettings | undefined> {
  const changes = {
    ...(limits.standardPerMinute !== undefined ? { rate_limit_standard: limits.standardPerMinute } : {}),
    ...(limits.aiPerMinute !== undefined ? { rate_limit_ai: limits.aiPerMinute } : {}),
  };
  const query = db("api_keys").where({ id });
  const [row] = (Object.keys(changes).length > 0 ? await query.update(changes).returning(API_KEY_COLUMNS) : await query.select(API_KEY_COLUMNS)) as ApiKeyRow[];
  if (!row) return undefined;
  return {
    id: row.id,
    keyHash: row.key_hash,
    mode: row.mode,
    scopes: asJson(row.scopes),
    name: row.name,
    rateLimits: rateLimitsOf(row),
    createdAt: asDate(row.created_at),
    revokedAt: row.revoked_at === null ? null : asDate(row.revoked_at),
  };
}

/**
 * Marks a key revoked (keeping the first revocation time) and returns its
 * hash, or undefined when there is no such key (of `ownerUserId`, when given).
 */
export async function revokeApiKey(db: Knex, id: string, ownerUserId?: string): Promise<{ keyHash: string } | undefined> {
  const [row] = (await db("api_keys")
    .where({ id, ...(ownerUserId === undefined ? {} : { user_id: ownerUserId }) })
    .update({ revoked_at: db.raw("coalesce(revoked_at, clock_timestamp())") })
    .returning(["key_hash"])) as { key_hash: string }[];
  return row ? { keyHash: row.key_hash } : undefined;
}

/** A key as its owner's dashboard lists it: never the key or its hash. */
export interface OwnKeyRow {
  id: string;
  name: string | null;
  mode: Mode;
  scopes: Scope[];
  hint: string;
  lastFour: string | null;
  createdAt: Date;
  revokedAt: Date | null;
}

/** Every key of a user, newest first (ties by id the same way). */
export async function listUserKeys(db: Knex, userId: string): Promise<OwnKeyRow[]> {
  const rows = (await db("api_keys")
    .where({ user_id: userId })
    .select("id", "name", "mode", "scopes", "hint", "last_four", "created_at", "revoked_at")
    .orderBy([
      { column: "created_at", order: "desc" },
      { column: "id", order: "desc" },
    ])) as Array<Pick<ApiKeyRow, "id" | "name" | "mode" | "scopes" | "created_at" | "revoked_at"> & { hint: string; last_four: string | null }>;
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    mode: r.mode,
    scopes: asJson(r.scopes),
    hint: r.hint,
    lastFour: r.last_four,
    createdAt: asDate(r.created_at),
    revokedAt: r.revoked_at === null ? null : asDate(r.revoked_at),
  }));
}
