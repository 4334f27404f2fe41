import { randomUUID } from "node:crypto";
import { outboxInsert } from "@sched/outbox";
import type { userCreated, userUpdated } from "@sched/proto";
import { formatTimestamp, type StoredUser } from "./domain/users.js";

/** One INSERT into the outbox, run in the transaction of the change it announces. */
export type OutboxStatement = ReturnType<typeof outboxInsert>;

/**
 * The outbox row announcing a user as stored: written in the same
 * transaction as the change, so the event goes out if and only if the change
 * commits, and a crash in between loses nothing.
 */
export function userEventRow(event: typeof userCreated | typeof userUpdated, user: StoredUser): OutboxStatement {
  const eventId = randomUUID();
  return outboxInsert(
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
}
