import {
  meetingCancelled,
  meetingUpdated,
  type AttendeeResponse,
  type Meeting,
  type meetingCreated,
  type meetingDeleted,
  type MeetingField,
  type meetingResponseUpdated,
  type MeetingStatus,
  type Mode,
  type PayloadOf,
  type ResponseSource,
} from "@sched/proto";
import { randomBase62 } from "@sched/ids";
import { toMeeting, type MeetingRecord } from "./meeting.js";
import { formatTimestamp } from "./timing.js";

/** The bus de-duplication id of a meeting's event: one per meeting and sequence number. */
export function eventMsgId(meetingId: string, sequence: number): string {
  return `meetings.${meetingId}.${sequence}`;
}

function base(record: MeetingRecord, sendInvites: boolean, eventId: string, now: Date) {
  return {
    eventId,
    meetingId: record.id,
    mode: record.mode,
    organizer: { userId: record.organizerId, email: record.organizerEmail },
    meeting: toMeeting(record),
    sequence: record.sequence,
    sendInvites,
    occurredAt: formatTimestamp(now),
  };
}

/**
 * The `meeting.created` event as JSON text, around the meeting's JSON text
 * (`meetingJson`, made once for the reply too). Every value in it comes
 * from the checked request and caller or from this service, so it is not
 * checked again on the way to the outbox: the tests hold it to the event's
 * schema (which takes it as it is, adding and dropping nothing).
 */
export function createdEventText(record: MeetingRecord, meetingJson: string, sendInvites: boolean, eventId: string, occurredAt: string): string {
  const rest: Omit<PayloadOf<typeof meetingCreated>, "meeting"> = {
    eventId,
    meetingId: record.id,
    mode: record.mode,
    organizer: { userId: record.organizerId, email: record.organizerEmail },
    sequence: record.sequence,
    sendInvites,
    occurredAt,
  };
  return `${JSON.stringify(rest).slice(0, -1)},"meeting":${meetingJson}}`;
}

export type ChangeEvent =
  | { def: typeof meetingUpdated; payload: PayloadOf<typeof meetingUpdated> }
  | { def: typeof meetingCancelled; payload: PayloadOf<typeof meetingCancelled> };

/** The event of an update: `meeting.cancelled` when it cancels, `meeting.updated` otherwise. */
export function changeEvent(
  before: { status: MeetingStatus; participants: string[] },
  after: MeetingRecord,
  changed: MeetingField[],
  sendInvites: boolean,
  eventId: string,
  now: Date,
): ChangeEvent {
  const payload = { ...base(after, sendInvites, eventId, now), changedFields: changed, previousStatus: before.status, previousParticipants: before.participants };
  return after.status === "cancelled" && before.status !== "cancelled" ? { def: meetingCancelled, payload } : { def: meetingUpdated, payload };
}

/**
 * The event of a removal: the meeting's last state marked cancelled, one
 * sequence on, so that consumers keeping meetings stop counting it and
 * invites sends cancellations when `sendInvites` says so.
 */
export function deletedEvent(before: MeetingRecord, sendInvites: boolean, eventId: string, now: Date): PayloadOf<typeof meetingDeleted> {
  const gone: MeetingRecord = { ...before, status: "cancelled", sequence: before.sequence + 1 };
  return { ...base(gone, sendInvites, eventId, now), previousStatus: before.status, previousParticipants: before.participants };
}

/** A unique id for one event, for consumers' logs and de-duplication. */
export function newEventId(): string {
  return `evt_${randomBase62(24)}`;
}

/**
 * The event of an answer, with what was answered as GET shows it after it: a
 * meeting, a series, or one occurrence (its id, `seriesId` and original start).
 */
export function responseEvent(
  answered: { meeting: Meeting; mode: Mode; organizerId: string; organizerEmail: string },
  email: string,
  previous: AttendeeResponse,
  source: ResponseSource,
  eventId: string,
  now: Date,
): PayloadOf<typeof meetingResponseUpdated> {
  const { meeting } = answered;
  const attendee = meeting.attendees.find((a) => a.email === email)!;
  return {
    eventId,
    meetingId: meeting.id,
    mode: answered.mode,
    organizer: { userId: answered.organizerId, email: answered.organizerEmail },
    meeting,
    attendee,
    previousResponse: previous,
    source,
    occurredAt: formatTimestamp(now),
  };
}

/** One answer is one event: the same answer recorded twice is published once. */
export function responseMsgId(meetingId: string, email: string, respondedAt: Date): string {
  return `meetings.${meetingId}.response.${email}.${respondedAt.getTime()}`;
}
