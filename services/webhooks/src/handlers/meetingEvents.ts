import type { Bus, Stoppable } from "@sched/bus";
import type { Knex } from "@sched/db";
import { newId } from "@sched/ids";
import type { Logger } from "@sched/logging";
import { meetingCancelled, meetingCreated, meetingDeleted, meetingEvents, meetingUpdated, type PayloadOf } from "@sched/proto";
import { lastMeetingState, recordEvent } from "../db/queries.js";
import { publicEventOf, type MeetingChange } from "../domain/publicEvent.js";

export const MEETING_EVENTS_CONSUMER = "webhooks-meeting-events";

const EVENTS_PER_BATCH = 100;

/** Each meeting event's subject (as the bus hands it over, without namespace) and what kind of change it is. */
const KIND_OF_SUBJECT = new Map<string, MeetingChange["kind"]>([
  [meetingCreated.subject, "meeting.created"],
  [meetingUpdated.subject, "meeting.updated"],
  [meetingCancelled.subject, "meeting.cancelled"],
  [meetingDeleted.subject, "meeting.deleted"],
]);

/**
 * Turns every meeting event into a public event and the deliveries it owes,
 * once: a batch in one transaction, in stream order (so a meeting's events
 * are recorded in their order, and an update finds the state before it),
 * acknowledged only once committed. A redelivered event finds itself
 * recorded and adds nothing. Only the database can make this fail, so a
 * batch is retried for as long as it takes.
 */
export function consumeMeetingEvents(bus: Bus, db: Knex, logger: Logger, recorded: () => void): Promise<Stoppable> {
  const options = { durable: MEETING_EVENTS_CONSUMER, events: meetingEvents, maxBatch: EVENTS_PER_BATCH, backoffMs: [200, 1_000, 5_000, 15_000, 30_000] };
  return bus.consumeBatches(options, async (messages) => {
    let added = 0;
    await db.transaction(async (trx) => {
      for (const message of messages) {
        const payload = message.payload as PayloadOf<typeof meetingUpdated>;
        const change: MeetingChange = { ...payload, kind: KIND_OF_SUBJECT.get(message.subject)! };
        const before = change.kind === "meeting.created" ? undefined : await lastMeetingState(trx, payload.meetingId);
        const event = publicEventOf(change, newId("evt"), before);
        if (await recordEvent(trx, { sourceEventId: payload.eventId, userId: payload.organizer.userId, meetingId: payload.meetingId, event }, () => newId("whd"))) added++;
      }
    });
    logger.debug({ events: messages.length, added }, "webhook events recorded");
    if (added > 0) recorded();
  });
}
