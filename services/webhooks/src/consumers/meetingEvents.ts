import type { Bus, EventMessage, Stoppable } from "@sched/bus";
import type { Knex } from "@sched/db";
import { newId } from "@sched/ids";
import type { Logger } from "@sched/logging";
import { meetingCancelled, meetingCreated, meetingDeleted, meetingResponseUpdated, meetingStreamEvents, meetingUpdated, type Meeting, type PayloadOf, type PublicEvent } from "@sched/proto";
import { lastMeetingStates } from "../db/queries.js";
import { publicEventOf, responseEventOf, type MeetingChange, type ResponseChange } from "../domain/publicEvent.js";
import { recordBatch, type RecordingClaims } from "./recording.js";

export const MEETING_EVENTS_CONSUMER = "webhooks-meeting-events";

const EVENTS_PER_BATCH = 100;

/** Each meeting event's subject (as the bus hands it over, without namespace) and what kind of change it is. */
const KIND_OF_SUBJECT = new Map<string, MeetingChange["kind"]>([
  [meetingCreated.subject, "meeting.created"],
  [meetingUpdated.subject, "meeting.updated"],
  [meetingCancelled.subject, "meeting.cancelled"],
  [meetingDeleted.subject, "meeting.deleted"],
]);

/** The public event of one event of the MEETINGS stream; a change or an answer finds the meeting as the event before it here showed it. */
function publicEventOfMessage(message: EventMessage, id: string, before: Meeting | undefined): PublicEvent {
  if (message.subject === meetingResponseUpdated.subject) return responseEventOf(message.payload as ResponseChange, id, before);
  const change: MeetingChange = { ...(message.payload as PayloadOf<typeof meetingUpdated>), kind: KIND_OF_SUBJECT.get(message.subject)! };
  return publicEventOf(change, id, change.kind === "meeting.created" ? undefined : before);
}

/**
 * Turns every meeting event (answers included) into a public event and the
 * deliveries it owes, once: a batch in stream order (so a meeting's events
 * are recorded in their order, and an update finds the state before it:
 * from the batch's earlier event of its meeting, else from the newest
 * recorded, read for the whole batch at once), written in one statement and
 * acknowledged only once committed. A redelivered event finds itself
 * recorded and adds nothing. Only the database can make this fail, so a
 * batch is retried for as long as it takes.
 */
export function consumeMeetingEvents(bus: Bus, db: Knex, logger: Logger, claims: RecordingClaims): Promise<Stoppable> {
  const options = { durable: MEETING_EVENTS_CONSUMER, events: meetingStreamEvents, maxBatch: EVENTS_PER_BATCH, backoffMs: [200, 1_000, 5_000, 15_000, 30_000] };
  return bus.consumeBatches(options, async (messages) => {
    const meetingOf = (message: EventMessage) => (message.payload as { meetingId: string }).meetingId;
    // A create needs no earlier state: a batch of creates reads none.
    const states = await lastMeetingStates(db, messages.filter((m) => m.subject !== meetingCreated.subject).map(meetingOf));
    const records = messages.map((message) => {
      const payload = message.payload as PayloadOf<typeof meetingResponseUpdated>;
      const event = publicEventOfMessage(message, newId("evt"), states.get(payload.meetingId));
      states.set(payload.meetingId, event.data.object as Meeting);
      return { sourceEventId: payload.eventId, userId: payload.organizer.userId, meetingId: payload.meetingId, event };
    });
    const added = await recordBatch(db, records, claims);
    logger.debug({ events: messages.length, added }, "webhook events recorded");
  });
}
