import { isEvent, type Bus, type EventMessageOf, type Stoppable } from "@sched/bus";
import type { Knex } from "@sched/db";
import { newId } from "@sched/ids";
import type { Logger } from "@sched/logging";
import { meetingCancelled, meetingCreated, meetingResponseUpdated, meetingStreamEvents, meetingUpdated, type Meeting, type meetingEvents, type PublicEvent } from "@sched/proto";
import { lastMeetingStates } from "../db/queries.js";
import { publicEventOf, responseEventOf, type MeetingChange } from "../domain/publicEvent.js";
import type { RecordingClaims } from "./recording.js";
import { RECORDING_BACKOFF_MS, StreamRecorder } from "./streamOrder.js";

export const MEETING_EVENTS_CONSUMER = "webhooks-meeting-events";

const EVENTS_PER_BATCH = 100;

/** A change of a meeting with the kind of change its event declares. */
function changeOf(message: EventMessageOf<(typeof meetingEvents)[number]>): MeetingChange {
  if (isEvent(message, meetingCreated)) return { ...message.payload, kind: "meeting.created" };
  if (isEvent(message, meetingUpdated)) return { ...message.payload, kind: "meeting.updated" };
  if (isEvent(message, meetingCancelled)) return { ...message.payload, kind: "meeting.cancelled" };
  return { ...message.payload, kind: "meeting.deleted" };
}

/** The public event of one event of the MEETINGS stream; a change or an answer finds the meeting as the event before it here showed it. */
function publicEventOfMessage(message: EventMessageOf<(typeof meetingStreamEvents)[number]>, id: string, before: Meeting | undefined): PublicEvent {
  if (isEvent(message, meetingResponseUpdated)) return responseEventOf(message.payload, id, before);
  const change = changeOf(message);
  return publicEventOf(change, id, change.kind === "meeting.created" ? undefined : before);
}

/**
 * Turns every meeting event (answers included) into a public event and the
 * deliveries it owes, once: a batch in stream order, recorded only right
 * after the events before it, whichever replica holds those (StreamRecorder),
 * so a meeting's events are recorded in their order and an update finds the
 * state before it: from the batch's earlier event of its meeting, else from
 * the newest recorded, read for the whole batch at once in the recording
 * transaction. Written in one statement and acknowledged only once
 * committed. A redelivered event is skipped. Only the database (or a
 * replica holding earlier events) holds a batch back, so it is retried for
 * as long as it takes.
 */
export function consumeMeetingEvents(bus: Bus, db: Knex, logger: Logger, claims: RecordingClaims): Promise<Stoppable> {
  const options = { durable: MEETING_EVENTS_CONSUMER, events: meetingStreamEvents, maxBatch: EVENTS_PER_BATCH, backoffMs: RECORDING_BACKOFF_MS };
  const recorder = new StreamRecorder(db, MEETING_EVENTS_CONSUMER, logger, claims);
  return bus.consumeBatches(options, async (batch) => {
    const added = await recorder.record(batch, async (trx, messages) => {
      // A create needs no earlier state: a batch of creates reads none.
      const states = await lastMeetingStates(trx, messages.filter((m) => !isEvent(m, meetingCreated)).map((m) => m.payload.meetingId));
      return messages.map((message) => {
        const { payload } = message;
        const event = publicEventOfMessage(message, newId("evt"), states.get(payload.meetingId));
        states.set(payload.meetingId, event.data.object as Meeting);
        return { sourceEventId: payload.eventId, userId: payload.organizer.userId, meetingId: payload.meetingId, event };
      });
    });
    logger.debug({ events: batch.length, added }, "webhook events recorded");
  });
}
