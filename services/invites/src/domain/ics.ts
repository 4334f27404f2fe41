import { isId } from "@sched/ids";
import type { AttendeeResponse, InviteKind, Meeting } from "@sched/proto";
import ical, { ICalAttendeeRole, ICalAttendeeStatus, ICalCalendarMethod, ICalEventStatus } from "ical-generator";
import { meetingEndMs } from "./meetingTimes.js";

export interface IcsInput {
  meeting: Meeting;
  sequence: number;
  kind: InviteKind;
  /** The participant this message goes to. */
  recipient: string;
  organizer: { email: string; name?: string };
  /** Where the attendee's calendar client sends its REPLY (the organizer's SENT-BY); absent: to the organizer. */
  replyAddress?: string;
  /** The domain of UIDs: the same meeting keeps one UID forever, so clients update rather than duplicate. */
  uidDomain: string;
}

/** The iCalendar UID of a meeting: stable across every change of it. */
function meetingUid(meetingId: string, uidDomain: string): string {
  return `${meetingId}@${uidDomain}`;
}

/** The meeting id a UID of ours names; undefined for any other UID. */
export function meetingIdOfUid(uid: string, uidDomain: string): string | undefined {
  const suffix = `@${uidDomain}`;
  if (!uid.endsWith(suffix)) return undefined;
  const id = uid.slice(0, -suffix.length);
  return isId("mtg", id) ? id : undefined;
}

const PARTSTAT: Readonly<Record<AttendeeResponse, ICalAttendeeStatus>> = {
  needsAction: ICalAttendeeStatus.NEEDSACTION,
  accepted: ICalAttendeeStatus.ACCEPTED,
  declined: ICalAttendeeStatus.DECLINED,
  tentative: ICalAttendeeStatus.TENTATIVE,
};

const PRODUCT_ID = { company: "sched", product: "invites", language: "EN" };

/** What every copy of a meeting says of it: one UID forever, the change number, the times in UTC, the text. */
function meetingEventFields(meeting: Meeting, sequence: number, uidDomain: string) {
  return {
    id: meetingUid(meeting.id, uidDomain),
    sequence,
    start: new Date(meeting.startTime),
    end: new Date(meetingEndMs(meeting)),
    stamp: new Date(),
    summary: meeting.title,
    description: meeting.description || null,
  };
}

/**
 * The iTIP message (RFC 5546) for one participant: METHOD:REQUEST carries the
 * whole meeting with every attendee; METHOD:CANCEL of a cancelled meeting
 * lists everyone and says CANCELLED, while one telling a removed participant
 * lists only them, so the others' copies are not touched. Times are UTC.
 */
export function buildIcs(input: IcsInput): string {
  const { meeting, kind, recipient } = input;
  const wholeMeetingCancelled = kind === "cancel" && meeting.status === "cancelled";
  const attendees = kind === "request" || wholeMeetingCancelled ? meeting.participants.filter((p) => p !== input.organizer.email) : [recipient];
  const calendar = ical({ prodId: PRODUCT_ID, method: kind === "request" ? ICalCalendarMethod.REQUEST : ICalCalendarMethod.CANCEL });
  calendar.createEvent({
    ...meetingEventFields(meeting, input.sequence, input.uidDomain),
    organizer: { name: input.organizer.name ?? input.organizer.email, email: input.organizer.email, ...(input.replyAddress ? { sentBy: input.replyAddress } : {}) },
    status: kind === "request" ? ICalEventStatus.CONFIRMED : ICalEventStatus.CANCELLED,
    attendees: attendees.map((email) => ({ email, rsvp: kind === "request", role: ICalAttendeeRole.REQ, status: ICalAttendeeStatus.NEEDSACTION })),
  });
  return calendar.toString();
}

/**
 * The meeting as an event in the organizer's own calendar (RFC 4791: no
 * METHOD), every participant an ATTENDEE awaiting an answer: a server that
 * schedules (RFC 6638) sends them the invitation, the updates and, when the
 * event is deleted, the cancellation, and writes their answers back as PARTSTAT.
 */
export function calendarObject(input: { meeting: Meeting; sequence: number; organizerEmail: string; uidDomain: string }): string {
  const { meeting } = input;
  const calendar = ical({ prodId: PRODUCT_ID });
  calendar.createEvent({
    ...meetingEventFields(meeting, input.sequence, input.uidDomain),
    organizer: { name: input.organizerEmail, email: input.organizerEmail },
    status: ICalEventStatus.CONFIRMED,
    // The answers known so far stay: replacing the event must not make the server forget them.
    attendees: meeting.participants
      .filter((p) => p !== input.organizerEmail)
      .map((email) => ({ email, rsvp: true, role: ICalAttendeeRole.REQ, status: PARTSTAT[meeting.attendees.find((a) => a.email === email)?.response ?? "needsAction"] })),
  });
  return calendar.toString();
}
