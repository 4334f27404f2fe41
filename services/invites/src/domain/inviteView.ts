import { formatTimestamp } from "@sched/proto";
import type { Attendee, MeetingInvite } from "@sched/proto";
import type { DeliveryRecord } from "../db/queries.js";

/** An invite delivery without the participant's answer (meetings owns that). */
export type DeliveryView = Omit<MeetingInvite, "response" | "respondedAt">;


/** A delivery as the API shows it, in the order of its fields there. */
export function deliveryView(row: DeliveryRecord): DeliveryView {
  const { meetingId, email, kind, sequence, state, channel, attempts, lastError } = row;
  return { meetingId, email, kind, sequence, state, channel, attempts, lastError, updatedAt: formatTimestamp(row.updatedAt) };
}

/** A delivery with the participant's answer; a removed participant (no attendee) has none. */
export function inviteView(row: DeliveryRecord, attendee: Attendee | undefined): MeetingInvite {
  return { ...deliveryView(row), response: attendee?.response ?? null, respondedAt: attendee?.respondedAt ?? null };
}
