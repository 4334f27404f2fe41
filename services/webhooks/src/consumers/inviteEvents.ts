import { isEvent, type Bus, type Stoppable } from "@sched/bus";
import type { Knex } from "@sched/db";
import { newId } from "@sched/ids";
import type { Logger } from "@sched/logging";
import { inviteEvents, inviteFailed } from "@sched/proto";
import { lastMeetingStates } from "../db/queries.js";
import { awaitsMeetingEvent, inviteEventOf } from "../domain/publicEvent.js";
import type { RecordingClaims } from "./recording.js";
import { RECORDING_BACKOFF_MS, StreamRecorder } from "./streamOrder.js";

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
 * the grace is over: so an invite event follows its meeting's. Replicas
 * record the stream in its order (StreamRecorder).
 */
export function consumeInviteEvents(bus: Bus, db: Knex, logger: Logger, claims: RecordingClaims): Promise<Stoppable> {
  const options = { durable: INVITE_EVENTS_CONSUMER, events: inviteEvents, maxBatch: EVENTS_PER_BATCH, backoffMs: RECORDING_BACKOFF_MS };
  const recorder = new StreamRecorder(db, INVITE_EVENTS_CONSUMER, logger, claims);
  return bus.consumeBatches(options, async (batch) => {
    const added = await recorder.record(batch, async (trx, messages) => {
      const payloads = messages.map((message) => ({ ...message.payload, kind: isEvent(message, inviteFailed) ? ("invite.failed" as const) : ("invite.sent" as const) }));
      const meetings = await lastMeetingStates(trx, payloads.map((p) => p.meetingId));
      const now = new Date();
      return payloads.map((payload) => {
        const meeting = meetings.get(payload.meetingId);
        if (awaitsMeetingEvent(payload.occurredAt, meeting !== undefined, now)) throw new Error(`invite settlement of ${payload.meetingId} waits for the meeting's first event`);
        return { sourceEventId: payload.eventId, userId: payload.organizer.userId, meetingId: payload.meetingId, event: inviteEventOf(payload, newId("evt"), meeting) };
      });
    });
    logger.debug({ events: batch.length, added }, "invite webhook events recorded");
  });
}
