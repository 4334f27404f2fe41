import { bind, type EndpointBinding } from "@sched/bus";
import type { Knex } from "@sched/db";
import { AppError } from "@sched/errors";
import { accountsAuthenticate, accountsLookupUsers } from "@sched/proto";
import { normalizeEmail, profileView } from "../domain/users.js";
import { findCallerByKeyHash, lookupUsers } from "../db/queries.js";

/** The questions the gateway and the other services ask. */
export function internalBindings(db: Knex): EndpointBinding[] {
  return [
    bind(accountsAuthenticate, async ({ keyHash }) => {
      const caller = await findCallerByKeyHash(db, keyHash);
      // One message for unknown and revoked keys: the answer tells nothing about which keys exist.
      if (!caller) throw new AppError("unauthorized", "Invalid API key.");
      return { caller };
    }),

    bind(accountsLookupUsers, async ({ ids, emails }) => {
      const users = await lookupUsers(db, { ids: ids ?? [], emails: (emails ?? []).map(normalizeEmail) });
      return { users: users.map(profileView) };
    }),
  ];
}
