import { notFound } from "@sched/errors";
import { isId } from "@sched/ids";
import { SCOPES, type Scope } from "@sched/proto";

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
