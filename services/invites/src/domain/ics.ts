import { isId } from "@sched/ids";
import type { AttendeeResponse, InviteKind, Meeting, SeriesOfEvent } from "@sched/proto";
import ical, { ICalAttendeeRole, ICalAttendeeStatus, ICalCalendarMethod, ICalEventStatus, type ICalCalendar } from "ical-generator";
import { occurrenceMeeting, occurrencesFor, occurrencesLostBy } from "./changedOccurrences.js";
import { meetingEndMs } from "./meetingTimes.js";
import { calendarMeetingId, occurrenceStart, recurrenceLines } from "./series.js";
import { inZone, vtimezoneOf, writtenZone } from "./seriesZone.js";

export interface IcsInput {
  meeting: Meeting;
  /** The series the meeting is or belongs to, as its event gave it; absent for a single meeting. */
  series?: SeriesOfEvent | undefined;
  sequence: number;
  kind: InviteKind;
  /** The participant this message goes to. */
  recipient: string;
  organizer: { email: string; name?: string };
  /**
   * Where the attendee's calendar client sends its REPLY: the ORGANIZER's
   * address, the organizer named beside it (CN). Absent: the organizer's own.
   */
  replyAddress?: string;
  /** The domain of UIDs: the same meeting keeps one UID forever, so clients update rather than duplicate. */
  uidDomain: string;
  /** When the message is written (epoch ms; now when absent): changed occurrences ended by then are history, not sent. */
  now?: number;
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

const PARTSTAT: Readonly<Record<AttendeeResponse, ICalAttendeeStatus>> = {
  needsAction: ICalAttendeeStatus.NEEDSACTION,
  accepted: ICalAttendeeStatus.ACCEPTED,
  declined: ICalAttendeeStatus.DECLINED,
  tentative: ICalAttendeeStatus.TENTATIVE,
};

const PRODUCT_ID = { company: "sched", product: "invites", language: "EN" };

/**
 * What every copy of a meeting says of it: one UID forever (a series' for
 * each of its occurrences), the change number, the times, the text. A series
 * carries its rule and cancelled occurrences (RRULE, EXDATE) with its times
 * in its zone (DTSTART;TZID, and the calendar gets the VTIMEZONE), so clients
 * expand it there; an occurrence changed on its own names the one it replaces
 * (RECURRENCE-ID, in the same form as the series' DTSTART). A single meeting's
 * times are UTC.
 */
function meetingEventFields(meeting: Meeting, series: SeriesOfEvent | undefined, sequence: number, uidDomain: string) {
  const original = occurrenceStart(meeting);
  const rule = original ? undefined : (series?.rule ?? meeting.recurrence ?? undefined);
  const zone = original || rule ? writtenZone(series?.timeZone) : undefined;
  const at = (instant: string | number) => (zone ? inZone(instant, zone) : new Date(instant));
  return {
    id: meetingUid(calendarMeetingId(meeting), uidDomain),
    sequence,
    start: at(meeting.startTime),
    end: at(meetingEndMs(meeting)),
    timezone: zone ?? null,
    recurrenceId: original ? at(original) : null,
    repeating: rule ? recurrenceLines({ rule, cancelledStarts: series?.cancelledStarts ?? [] }, zone).join("\n") : null,
    stamp: new Date(),
    summary: meeting.title,
    description: meeting.description || null,
  };
}

/** A calendar whose events are written in `zone` carries that zone's VTIMEZONE. */
function withZone(calendar: ICalCalendar, fields: { timezone: string | null }): ICalCalendar {
  if (fields.timezone) calendar.timezone({ name: fields.timezone, generator: (zone) => vtimezoneOf(zone) ?? null });
  return calendar;
}

/**
 * The iTIP message (RFC 5546) for one participant: METHOD:REQUEST carries the
 * whole meeting with every attendee (a series with each of its changed
 * occurrences not yet ended as its own VEVENT with RECURRENCE-ID, RFC 5546
 * 3.2.2, so a client taking the series again keeps them where they were
 * moved); METHOD:CANCEL of a cancelled meeting
 * lists everyone and says CANCELLED, while one telling a removed participant
 * lists only them, so the others' copies are not touched. Times are UTC,
 * a series' in its zone. An occurrence changed or cancelled on its own is
 * a message about that occurrence only (RFC 5546 3.2.2.1 and 3.2.5: the
 * series' UID and the occurrence's RECURRENCE-ID): a cancellation of one
 * occurrence is a CANCEL naming it, not the series sent again with a new
 * EXDATE, which would be a new version of the whole series (every
 * attendee's client would ask for their answer again). A series cancelled
 * cancels every occurrence: a CANCEL without RECURRENCE-ID; someone added
 * to some of its occurrences only gets a CANCEL of those occurrences, as
 * when a new time of the series drops the occurrences they were added to.
 */
export function buildIcs(input: IcsInput): string {
  const { meeting, kind, recipient, series } = input;
  const calendar = ical({ prodId: PRODUCT_ID, method: kind === "request" ? ICalCalendarMethod.REQUEST : ICalCalendarMethod.CANCEL });
  // Clients mail a REPLY to the ORGANIZER's address (Gmail, Outlook, Apple Calendar; few heed SENT-BY or Reply-To): it is the reply address.
  const organizer = { name: input.organizer.name ?? input.organizer.email, email: input.replyAddress ?? input.organizer.email };
  const others = (m: Meeting) => m.participants.filter((p) => p !== input.organizer.email);
  const add = (m: Meeting, attendees: string[], asSeries = series, cancelled = kind !== "request") => {
    const fields = meetingEventFields(m, asSeries, input.sequence, input.uidDomain);
    withZone(calendar, fields).createEvent({
      ...fields,
      organizer,
      status: cancelled ? ICalEventStatus.CANCELLED : ICalEventStatus.CONFIRMED,
      attendees: attendees.map((email) => ({ email, rsvp: kind === "request", role: ICalAttendeeRole.REQ, status: ICalAttendeeStatus.NEEDSACTION })),
    });
  };
  const lost = kind === "cancel" && series ? occurrencesLostBy(meeting, series, recipient) : [];
  if (lost.length > 0) {
    // Not a participant of the series: only the occurrences they were added to are theirs to cancel.
    for (const occurrence of lost) add(occurrenceMeeting(meeting, occurrence), [recipient]);
    return calendar.toString();
  }
  if (kind === "request" && series && !occurrenceStart(meeting)) {
    // Each recipient gets the changed occurrences that are theirs (occurrencesFor).
    const theirs = occurrencesFor(meeting, series, recipient, input.now ?? Date.now());
    if (theirs.ofSeries) {
      const excluded = theirs.excluded.map((o) => o.originalStartTime);
      add(meeting, others(meeting), { ...series, cancelledStarts: [...series.cancelledStarts, ...excluded].sort() });
    }
    for (const occurrence of theirs.overrides) {
      const changed = occurrenceMeeting(meeting, occurrence);
      add(changed, others(changed));
    }
    for (const occurrence of theirs.cancelled) add(occurrenceMeeting(meeting, occurrence), [recipient], series, true);
    return calendar.toString();
  }
  const wholeMeetingCancelled = kind === "cancel" && meeting.status === "cancelled";
  add(meeting, kind === "request" || wholeMeetingCancelled ? others(meeting) : [recipient]);
  return calendar.toString();
}

/**
 * The meeting as an event in the organizer's own calendar (RFC 4791: no
 * METHOD), every participant an ATTENDEE awaiting an answer: a server that
 * schedules (RFC 6638) sends them the invitation, the updates and, when the
 * event is deleted, the cancellation, and writes their answers back as PARTSTAT.
 */
export function calendarObject(input: { meeting: Meeting; series?: SeriesOfEvent | undefined; sequence: number; organizerEmail: string; uidDomain: string }): string {
  const { meeting } = input;
  const fields = meetingEventFields(meeting, input.series, input.sequence, input.uidDomain);
  const calendar = withZone(ical({ prodId: PRODUCT_ID }), fields);
  calendar.createEvent({
    ...fields,
    organizer: { name: input.organizerEmail, email: input.organizerEmail },
    status: ICalEventStatus.CONFIRMED,
    // The answers known so far stay: replacing the event must not make the server forget them.
    attendees: meeting.participants
      .filter((p) => p !== input.organizerEmail)
      .map((email) => ({ email, rsvp: true, role: ICalAttendeeRole.REQ, status: PARTSTAT[meeting.attendees.find((a) => a.email === email)?.response ?? "needsAction"] })),
  });
  return calendar.toString();
}
