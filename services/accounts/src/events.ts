import { randomUUID } from "node:crypto";
import type { Bus } from "@sched/bus";
import type { Logger } from "@sched/logging";
import type { userCreated, userUpdated } from "@sched/proto";
import { formatTimestamp, type StoredUser } from "./domain/users.js";

export interface EventDeps {
  bus: Bus;
  logger: Logger;
}

/**
 * The one place user events leave the service, called right after the
 * change has committed. The change stands even if publishing fails (a retried
 * create would only meet 409), so a failure is logged, not thrown; moving
 * this onto a transactional outbox closes that gap without touching callers.
 */
export async function publishUserEvent(
  { bus, logger }: EventDeps,
  event: typeof userCreated | typeof userUpdated,
  user: StoredUser,
): Promise<void> {
  const eventId = randomUUID();
  const payload = {
    eventId,
    userId: user.id,
    email: user.email,
    name: user.name,
    timezone: user.timezone,
    preferences: user.preferences,
    occurredAt: formatTimestamp(user.updatedAt),
  };
  try {
    await bus.publish(event, payload, { msgId: eventId });
  } catch (err) {
    logger.error({ err, subject: event.subject, userId: user.id, eventId }, "user event not published");
  }
}
