import { bind, type Bus, type EndpointBinding } from "@sched/bus";
import { isUniqueViolation, type Knex } from "@sched/db";
import { notFound } from "@sched/errors";
import { apiKeyHint, generateApiKey, hashApiKey, newId } from "@sched/ids";
import { revokeAndAnnounce } from "./revoke.js";
import {
  accountsAdminCreateKey,
  accountsAdminCreateUser,
  accountsAdminFindUsers,
  accountsAdminRevokeKey,
  accountsAdminUpdateKey,
  keyChanged,
  userCreated,
} from "@sched/proto";
import { apiKeyView, keyScopes, requireKeyId, requireUserId } from "../domain/apiKeys.js";
import { DEFAULT_TIME_ZONE, requireTimeZone } from "../domain/timeZone.js";
import { adminUserView, formatTimestamp, normalizeEmail, userExists } from "../domain/users.js";
import { UNIQUE_EMAIL_CONSTRAINT, findUser, findUsersByEmail, insertApiKey, insertUser, updateApiKeyLimits } from "../db/queries.js";
import { announceUser } from "../outbound/events.js";
import type { OutboxRelay } from "@sched/outbox";

/** The admin API the gateway serves under /admin/v1 (api-decisions 3); the gateway checked the admin token. */
export function adminBindings(db: Knex, bus: Bus, relay: Pick<OutboxRelay, "wake">): EndpointBinding[] {
  return [
    bind(accountsAdminCreateUser, async ({ body }) => {
      const timezone = body.timezone === undefined ? DEFAULT_TIME_ZONE : requireTimeZone(body.timezone);
      let user;
      try {
        // No read before the insert: the unique constraint alone decides, so two racing creates get one 201 and one 409.
        user = await insertUser(db, { id: newId("usr"), email: body.email, name: body.name, timezone }, announceUser(userCreated));
      } catch (err) {
        if (isUniqueViolation(err, UNIQUE_EMAIL_CONSTRAINT)) throw userExists();
        throw err;
      }
      relay.wake();
      return { status: 201, body: adminUserView(user) };
    }),

    bind(accountsAdminFindUsers, async ({ query }) => {
      const users = await findUsersByEmail(db, normalizeEmail(query.email));
      return { status: 200, body: { data: users.map(adminUserView) } };
    }),

    bind(accountsAdminCreateKey, async ({ params, body }) => {
      const user = await findUser(db, requireUserId(params.id));
      if (!user) throw notFound("user");
      const key = generateApiKey(body.mode);
      const stored = await insertApiKey(db, {
        id: newId("key"),
        userId: user.id,
        keyHash: hashApiKey(key),
        hint: apiKeyHint(key),
        lastFour: key.slice(-4),
        mode: body.mode,
        scopes: keyScopes(body.scopes),
        name: body.name ?? null,
      });
      return {
        status: 201,
        body: { id: stored.id, key, mode: stored.mode, scopes: stored.scopes, name: stored.name, createdAt: formatTimestamp(stored.createdAt) },
      };
    }),

    bind(accountsAdminUpdateKey, async ({ params, body }) => {
      const key = await updateApiKeyLimits(db, requireKeyId(params.id), body.rateLimits);
      if (!key) throw notFound("API key");
      // Without this a replica would keep the old limits until its cached key expires.
      await bus.notify(keyChanged, { apiKeyId: key.id, keyHash: key.keyHash });
      return { status: 200, body: apiKeyView(key) };
    }),

    bind(accountsAdminRevokeKey, async ({ params }) => ({ status: 200, body: await revokeAndAnnounce(db, bus, requireKeyId(params.id)) })),
  ];
}
