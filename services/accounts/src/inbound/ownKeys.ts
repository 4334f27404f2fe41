import { bind, type Bus, type EndpointBinding } from "@sched/bus";
import type { Knex } from "@sched/db";
import { accountsListKeys, accountsRevokeOwnKey } from "@sched/proto";
import { apiKeyPreview, requireKeyId } from "../domain/apiKeys.js";
import { formatTimestamp } from "../domain/users.js";
import { listUserKeys } from "../db/queries.js";
import { revokeAndAnnounce } from "./revoke.js";

/** A user's own keys, as the dashboard shows and revokes them for that user alone. */
export function ownKeyBindings(db: Knex, bus: Bus): EndpointBinding[] {
  return [
    bind(accountsListKeys, async ({ userId }) => ({
      keys: (await listUserKeys(db, userId)).map((key) => ({
        id: key.id,
        name: key.name,
        mode: key.mode,
        scopes: key.scopes,
        preview: apiKeyPreview(key),
        createdAt: formatTimestamp(key.createdAt),
        revokedAt: key.revokedAt === null ? null : formatTimestamp(key.revokedAt),
      })),
    })),
    bind(accountsRevokeOwnKey, ({ userId, keyId }) => revokeAndAnnounce(db, bus, requireKeyId(keyId), userId)),
  ];
}
