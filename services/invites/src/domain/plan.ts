import type { InviteKind, Meeting, meetingCancelled, meetingCreated, meetingDeleted, meetingUpdated, Mode, PayloadOf, SeriesOfEvent } from "@sched/proto";
import { keepsAnOccurrence, occurrenceOnlyLosers } from "./changedOccurrences.js";
import { calendarMeetingId } from "./series.js";

/**
 * A removed meeting comes marked cancelled: it is planned as a cancellation.
 * An event about a series or one of its occurrences carries the series.
 */
export type MeetingEvent = PayloadOf<typeof meetingCreated> | PayloadOf<typeof meetingUpdated> | PayloadOf<typeof meetingCancelled> | PayloadOf<typeof meetingDeleted>;

/** One message owed to one participant for one change of a meeting. */
export interface PlannedDelivery {
  email: string;
  kind: InviteKind;
}

/** A meeting change as the delivery worker needs it, whatever event brought it. */
export interface MeetingChange {
  meetingId: string;
  sequence: number;
  mode: Mode;
  organizer: { userId: string; email: string };
  /** For an exception, the occurrence: its id is `meetingId`, its `seriesId` the series'. */
  meeting: Meeting;
  /** The series the meeting is or belongs to, as the event gave it; absent or null for a single meeting. */
  series?: SeriesOfEvent | null | undefined;
}

/**
 * Who hears what about one change (api-decisions 5). The meetings service has
 * already folded `sendInvites`, drafts and the kind of change into the event's
 * `sendInvites`; what is left is the split between current participants (an
 * invitation or update) and those who lost the meeting (a cancellation). The
 * organizer is never sent their own invitation. A series and each of its
 * occurrences changed on their own are meetings of their own here: the
 * series' participants hear of the series, an occurrence's of that
 * occurrence (its update or cancellation names it), each once. Someone
 * added to one occurrence only is told when a change of the series takes
 * it away (the series cancelled, or a new time dropping the occurrence):
 * a cancellation of that occurrence.
 */
export function plannedDeliveries(event: MeetingEvent): PlannedDelivery[] {
  if (!event.sendInvites) return [];
  const organizer = event.organizer.email.toLowerCase();
  const current = event.meeting.participants.map((p) => p.toLowerCase()).filter((p) => p !== organizer);
  // A draft never sent anything: nobody it listed has an invitation to take back.
  const previous = "previousStatus" in event && event.previousStatus !== "draft" ? event.previousParticipants.map((p) => p.toLowerCase()).filter((p) => p !== organizer) : [];
  // Someone added to one occurrence only hears of the series when it takes that occurrence away.
  const heard = new Set([...current, ...previous]);
  const occurrenceOnly = occurrenceOnlyLosers(event.meeting, event.series, organizer).filter((email) => !heard.has(email));
  const cancels = (emails: Iterable<string>) => [...new Set(emails)].map((email) => ({ email, kind: "cancel" as const }));
  if (event.meeting.status === "cancelled") return cancels([...current, ...previous, ...occurrenceOnly]);
  const stillIn = new Set(current);
  const removed = previous.filter((p) => !stillIn.has(p));
  // One whose occurrence a new time kept under a new RECURRENCE-ID hears of it at its new one (and of the old one gone).
  const keeping = occurrenceOnly.filter((email) => keepsAnOccurrence(event.meeting, event.series, email, Date.parse(event.occurredAt)));
  const losing = occurrenceOnly.filter((email) => !keeping.includes(email));
  return [...[...current, ...keeping].map((email) => ({ email, kind: "request" as const })), ...cancels([...removed, ...losing])];
}

export function changeOf(event: MeetingEvent): MeetingChange {
  return { meetingId: event.meetingId, sequence: event.sequence, mode: event.mode, organizer: event.organizer, meeting: event.meeting, series: event.series ?? null };
}

/**
 * The meeting whose changes a change is ordered among: a series and its
 * occurrences share one sequence counter, so an occurrence's update follows
 * the series' invitation it changes; a single meeting is its own.
 */
export function orderingIdOf(change: Pick<MeetingChange, "meeting" | "series">): string | null {
  return change.series ? calendarMeetingId(change.meeting) : null;
}
