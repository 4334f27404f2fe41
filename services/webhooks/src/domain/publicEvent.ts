import type { EventType, Meeting, MeetingField, MeetingPrevious, PublicEvent } from "@sched/proto";

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
export function previousValues(change: MeetingChange, before: Meeting | undefined): MeetingPrevious {
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

/** Whether an endpoint subscribed to `filters` receives events of `type`. */
export function subscribes(filters: readonly string[], type: EventType): boolean {
  return filters.includes("*") || filters.includes(type);
}
