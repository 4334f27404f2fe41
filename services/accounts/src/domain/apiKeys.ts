import { notFound } from "@sched/errors";
import { isId } from "@sched/ids";
import { SCOPES, type KeyRateLimits, type Mode, type Scope } from "@sched/proto";
import { formatTimestamp } from "./users.js";

/**
 * The scopes a new key gets: all of them when none are asked for
 * (api-decisions 2), otherwise the ones asked for, once each, in the
 * canonical order.
 */
export function keyScopes(requested?: readonly Scope[]): Scope[] {
  if (requested === undefined) return [...SCOPES];
  return SCOPES.filter((scope) => requested.includes(scope));
}

/** An id of the wrong shape names nothing: 404, like an unknown one. */
export function requireUserId(id: string): string {
  if (!isId("usr", id)) throw notFound("user");
  return id;
}

export function requireKeyId(id: string): string {
  if (!isId("key", id)) throw notFound("API key");
  return id;
}

/** A key as the admin API shows it after creation: its settings, never the key or its hash. */
export function apiKeyView(key: {
  id: string;
  mode: Mode;
  scopes: Scope[];
  name: string | null;
  rateLimits: KeyRateLimits;
  createdAt: Date;
  revokedAt: Date | null;
}) {
  return {
    id: key.id,
    mode: key.mode,
    scopes: key.scopes,
    name: key.name,
    rateLimits: key.rateLimits,
    createdAt: formatTimestamp(key.createdAt),
    revokedAt: key.revokedAt === null ? null : formatTimestamp(key.revokedAt),
  };
}

/** How a key is shown after creation: `sk_test_…abcd`, or the older first-characters hint of a key made before last fours were kept. */
export function apiKeyPreview(key: { mode: Mode; hint: string; lastFour: string | null }): string {
  return key.lastFour === null ? key.hint : `sk_${key.mode}_…${key.lastFour}`;
}
