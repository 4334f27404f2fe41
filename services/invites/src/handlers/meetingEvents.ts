import type { Bus, Stoppable } from "@sched/bus";
import type { Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import { meetingEvents } from "@sched/proto";
import { recordInviteDelivery } from "@sched/telemetry";
import { recordChange } from "../db/deliveries.js";
import { changeOf, plannedDeliveries, type MeetingEvent } from "../domain/plan.js";

export const MEETING_EVENTS_CONSUMER = "invites-meeting-events";

/**
 * Turns every meeting event into delivery rows, once. Acknowledged only
 * after the rows are committed, and a redelivered event finds its rows
 * already there: so an event is never lost and never owes twice. Delivering
 * is the worker's job, which `recorded` wakes. Only the database can make
 * this fail, so the event is retried for as long as it takes.
 */
export function consumeMeetingEvents(bus: Bus, db: Knex, logger: Logger, recorded: () => void): Promise<Stoppable> {
  return bus.consume({ durable: MEETING_EVENTS_CONSUMER, events: meetingEvents, backoffMs: [200, 1_000, 5_000, 15_000, 30_000], maxDeliver: 0 }, async (message) => {
    const event = message.payload as MeetingEvent;
    const planned = plannedDeliveries(event);
    if (planned.length === 0) return;
    const { added, channel } = await recordChange(db, changeOf(event), planned);
    if (event.mode === "test") {
      for (let i = 0; i < added; i++) recordInviteDelivery("simulated", channel);
    }
    logger.debug({ meetingId: event.meetingId, sequence: event.sequence, planned: planned.length, added }, "invites recorded");
    if (event.mode === "live" && added > 0) recorded();
  });
}
