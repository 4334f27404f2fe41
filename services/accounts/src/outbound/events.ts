import { randomUUID } from "node:crypto";
import type { Knex } from "@sched/db";
import { enqueueEvent } from "@sched/outbox";
import type { userCreated, userUpdated } from "@sched/proto";
import { formatTimestamp, type StoredUser } from "../domain/users.js";

/** Writes the event of a change inside the change's own transaction. */
export type Announce = (trx: Knex.Transaction, user: StoredUser) => Promise<void>;

/**
 * Announces a user as stored, through the outbox: the event goes out if and
 * only if the change commits, and a crash in between loses nothing.
 */
export function announceUser(event: typeof userCreated | typeof userUpdated): Announce {
  return (trx, user) => {
    const eventId = randomUUID();
    return enqueueEvent(
      trx,
      event,
      {
        eventId,
        userId: user.id,
        email: user.email,
        name: user.name,
        timezone: user.timezone,
        preferences: user.preferences,
        occurredAt: formatTimestamp(user.updatedAt),
      },
      eventId,
    );
  };
}
