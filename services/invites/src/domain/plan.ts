import type { InviteKind, Meeting, meetingCancelled, meetingCreated, meetingDeleted, meetingUpdated, Mode, PayloadOf } from "@sched/proto";

/** A removed meeting comes marked cancelled: it is planned as a cancellation. */
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
  meeting: Meeting;
}

/**
 * Who hears what about one change (api-decisions 5). The meetings service has
 * already folded `sendInvites`, drafts and the kind of change into the event's
 * `sendInvites`; what is left is the split between current participants (an
 * invitation or update) and those who lost the meeting (a cancellation). The
 * organizer is never sent their own invitation.
 */
export function plannedDeliveries(event: MeetingEvent): PlannedDelivery[] {
  if (!event.sendInvites) return [];
  const organizer = event.organizer.email.toLowerCase();
  const current = event.meeting.participants.map((p) => p.toLowerCase()).filter((p) => p !== organizer);
  // A draft never sent anything: nobody it listed has an invitation to take back.
  const previous = "previousStatus" in event && event.previousStatus !== "draft" ? event.previousParticipants.map((p) => p.toLowerCase()).filter((p) => p !== organizer) : [];
  if (event.meeting.status === "cancelled") {
    return [...new Set([...current, ...previous])].map((email) => ({ email, kind: "cancel" }));
  }
  const stillIn = new Set(current);
  const removed = previous.filter((p) => !stillIn.has(p));
  return [...current.map((email) => ({ email, kind: "request" as const })), ...[...new Set(removed)].map((email) => ({ email, kind: "cancel" as const }))];
}

export function changeOf(event: MeetingEvent): MeetingChange {
  return { meetingId: event.meetingId, sequence: event.sequence, mode: event.mode, organizer: event.organizer, meeting: event.meeting };
}
