import type { Bus, Stoppable } from "@sched/bus";
import type { Knex } from "@sched/db";
import { newId } from "@sched/ids";
import type { Logger } from "@sched/logging";
import { inviteEvents, inviteFailed, type PayloadOf } from "@sched/proto";
import { lastMeetingStates } from "../db/queries.js";
import { awaitsMeetingEvent, inviteEventOf } from "../domain/publicEvent.js";
import { recordBatch, type RecordingClaims } from "./recording.js";

const INVITE_EVENTS_CONSUMER = "webhooks-invite-events";

const EVENTS_PER_BATCH = 100;

/**
 * Turns every invite settlement of the INVITES stream into a public event
 * and the deliveries it owes, once, as consumeMeetingEvents does meeting
 * events: a batch written in one statement, acknowledged once committed; a
 * redelivered settlement finds itself recorded (its id is the source id).
 * The invite's answer is the participant's as the meeting's newest event
 * here showed it (read for the whole batch at once). A settlement that
 * overtook its meeting's first event (another stream, another consumer)
 * fails the batch, retried with back-off until that event is recorded or
 * the grace is over: so an invite event follows its meeting's.
 */
export function consumeInviteEvents(bus: Bus, db: Knex, logger: Logger, claims: RecordingClaims): Promise<Stoppable> {
  const options = { durable: INVITE_EVENTS_CONSUMER, events: inviteEvents, maxBatch: EVENTS_PER_BATCH, backoffMs: [200, 1_000, 5_000, 15_000, 30_000] };
  return bus.consumeBatches(options, async (messages) => {
    const payloads = messages.map((message) => ({ ...(message.payload as PayloadOf<typeof inviteFailed>), kind: message.subject === inviteFailed.subject ? ("invite.failed" as const) : ("invite.sent" as const) }));
    const meetings = await lastMeetingStates(db, payloads.map((p) => p.meetingId));
    const now = new Date();
    const records = payloads.map((payload) => {
      const meeting = meetings.get(payload.meetingId);
      if (awaitsMeetingEvent(payload.occurredAt, meeting !== undefined, now)) throw new Error(`invite settlement of ${payload.meetingId} waits for the meeting's first event`);
      return { sourceEventId: payload.eventId, userId: payload.organizer.userId, meetingId: payload.meetingId, event: inviteEventOf(payload, newId("evt"), meeting) };
    });
    const added = await recordBatch(db, records, claims);
    logger.debug({ events: messages.length, added }, "invite webhook events recorded");
  });
}
