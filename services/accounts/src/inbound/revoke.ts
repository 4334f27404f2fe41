import type { Bus } from "@sched/bus";
import type { Knex } from "@sched/db";
import { notFound } from "@sched/errors";
import { keyRevoked } from "@sched/proto";
import { revokeApiKey } from "../db/queries.js";

/**
 * Revokes a key (of `ownerUserId` only, when given) and tells every gateway
 * replica to forget it at once; an unknown key, or another user's, is 404.
 */
export async function revokeAndAnnounce(db: Knex, bus: Bus, id: string, ownerUserId?: string): Promise<{ id: string; revoked: true }> {
  const revoked = await revokeApiKey(db, id, ownerUserId);
  if (!revoked) throw notFound("API key");
  // Sent again on a repeated revoke: a replica that missed the first notice gets another chance.
  // A failure here fails the call, and the revoke is safe to retry.
  await bus.notify(keyRevoked, { apiKeyId: id, keyHash: revoked.keyHash });
  return { id, revoked: true };
}
