import { isId } from "@sched/ids";
import type { InviteKind, Meeting } from "@sched/proto";
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
export function meetingUid(meetingId: string, uidDomain: string): string {
  return `${meetingId}@${uidDomain}`;
}

/** The meeting id a UID of ours names; undefined for any other UID. */
export function meetingIdOfUid(uid: string, uidDomain: string): string | undefined {
  const suffix = `@${uidDomain}`;
  if (!uid.endsWith(suffix)) return undefined;
  const id = uid.slice(0, -suffix.length);
  return isId("mtg", id) ? id : undefined;
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
  const calendar = ical({ prodId: { company: "sched", product: "invites", language: "EN" }, method: kind === "request" ? ICalCalendarMethod.REQUEST : ICalCalendarMethod.CANCEL });
  calendar.createEvent({
    id: meetingUid(meeting.id, input.uidDomain),
    sequence: input.sequence,
    start: new Date(meeting.startTime),
    end: new Date(meetingEndMs(meeting)),
    stamp: new Date(),
    summary: meeting.title,
    description: meeting.description || null,
    organizer: { name: input.organizer.name ?? input.organizer.email, email: input.organizer.email, ...(input.replyAddress ? { sentBy: input.replyAddress } : {}) },
    status: kind === "request" ? ICalEventStatus.CONFIRMED : ICalEventStatus.CANCELLED,
    attendees: attendees.map((email) => ({ email, rsvp: kind === "request", role: ICalAttendeeRole.REQ, status: ICalAttendeeStatus.NEEDSACTION })),
  });
  return calendar.toString();
}
