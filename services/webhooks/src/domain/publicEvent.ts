import type { Attendee, EventType, Meeting, MeetingField, MeetingInvite, MeetingPrevious, PublicEvent, inviteSent, meetingResponseUpdated, PayloadOf } from "@sched/proto";

/** A meeting event as the meetings service publishes it, in the fields this service reads. */
export interface MeetingChange {
  eventId: string;
  kind: "meeting.created" | "meeting.updated" | "meeting.cancelled" | "meeting.deleted";
  mode: PublicEvent["mode"];
  meeting: Meeting;
  occurredAt: string;
  changedFields?: readonly MeetingField[];
  previousStatus?: Meeting["status"];
  previousParticipants?: readonly string[];
}

/**
 * The earlier values of the fields a change touched. The event names the
 * fields and carries the earlier status and participants; the other earlier
 * values come from the meeting as the previous event showed it, when this
 * service saw one (it may not have, for a meeting older than the service).
 */
function previousValues(change: MeetingChange, before: Meeting | undefined): MeetingPrevious {
  const previous: Record<string, unknown> = {};
  for (const field of change.changedFields ?? []) {
    if (field === "status" && change.previousStatus !== undefined) previous.status = change.previousStatus;
    else if (field === "participants" && change.previousParticipants !== undefined) previous.participants = [...change.previousParticipants];
    else if (before !== undefined) previous[field] = before[field];
  }
  return previous as MeetingPrevious;
}

/** The public event of a meeting change: its type, and for updates the earlier values. */
export function publicEventOf(change: MeetingChange, id: string, before: Meeting | undefined): PublicEvent {
  const type: EventType = change.kind;
  const withPrevious = type === "meeting.updated" || type === "meeting.cancelled";
  return {
    id,
    type,
    createdAt: change.occurredAt,
    mode: change.mode,
    data: withPrevious ? { object: change.meeting, previous: previousValues(change, before) } : { object: change.meeting },
  };
}

/** A participant's answer as the meetings service publishes it. */
export type ResponseChange = PayloadOf<typeof meetingResponseUpdated>;

/**
 * The public event of an answer: the meeting with its attendees, and in
 * `previous.attendees` only the participant who answered, as they stood
 * before. Their earlier `respondedAt` comes from the meeting as the previous
 * event showed it, when that agrees with the earlier answer; else null.
 */
export function responseEventOf(change: ResponseChange, id: string, before: Meeting | undefined): PublicEvent {
  const email = change.attendee.email.toLowerCase();
  const earlier = before?.attendees.find((a) => a.email.toLowerCase() === email);
  const respondedAt = earlier?.response === change.previousResponse ? earlier.respondedAt : null;
  const previousAttendee: Attendee = { email: change.attendee.email, response: change.previousResponse, respondedAt };
  return {
    id,
    type: "meeting.response_updated",
    createdAt: change.occurredAt,
    mode: change.mode,
    data: { object: change.meeting, previous: { attendees: [previousAttendee] } },
  };
}

/** An invite's settlement as the invites service publishes it. */
export type InviteSettlement = PayloadOf<typeof inviteSent> & { kind: "invite.sent" | "invite.failed" };

/**
 * The public event of an invite's settlement: the invite as
 * `GET /v1/meetings/:id/invites` lists it, with the participant's answer as
 * the meeting's newest event showed it (null for a participant no longer on
 * it, or a meeting this service has not seen).
 */
export function inviteEventOf(settlement: InviteSettlement, id: string, meeting: Meeting | undefined): PublicEvent {
  const email = settlement.invite.email.toLowerCase();
  const attendee = meeting?.attendees.find((a) => a.email.toLowerCase() === email);
  const object: MeetingInvite = { ...settlement.invite, response: attendee?.response ?? null, respondedAt: attendee?.respondedAt ?? null };
  return { id, type: settlement.kind, createdAt: settlement.occurredAt, mode: settlement.mode, data: { object } };
}

/**
 * How long an invite's settlement waits for this service to have recorded an
 * event of its meeting. Both come from the meeting's change, over two
 * streams, so the settlement may overtake it; past this, the meeting is one
 * whose events came before this service did, and the settlement goes on.
 */
export const MEETING_EVENT_GRACE_MS = 60_000;

/** Whether a settlement should wait (its batch retried later) for its meeting's first event, so that it follows it. */
export function awaitsMeetingEvent(settledAt: string, meetingSeen: boolean, now: Date): boolean {
  return !meetingSeen && now.getTime() - Date.parse(settledAt) < MEETING_EVENT_GRACE_MS;
}

/** The meeting an event is about: its object, or the meeting its invite is to. */
export function meetingIdOf(event: PublicEvent): string {
  const { object } = event.data;
  return "meetingId" in object ? object.meetingId : object.id;
}

/** Whether an endpoint subscribed to `filters` receives events of `type`. */
export function subscribes(filters: readonly string[], type: EventType): boolean {
  return filters.includes("*") || filters.includes(type);
}
