import type { Duration, MeetingField, MeetingStatus } from "@sched/proto";

/** The fields of a meeting that a PATCH can change. */
export interface MeetingState {
  title: string;
  description: string;
  startTime: Date;
  duration: Duration;
  participants: string[];
  status: MeetingStatus;
}

/** A validated PATCH: absent fields stay as they are. */
export type MeetingPatch = Partial<MeetingState>;

export function applyPatch(current: MeetingState, patch: MeetingPatch): MeetingState {
  return {
    title: patch.title ?? current.title,
    description: patch.description ?? current.description,
    startTime: patch.startTime ?? current.startTime,
    duration: patch.duration ?? current.duration,
    participants: patch.participants ?? current.participants,
    status: patch.status ?? current.status,
  };
}

/** Fields whose value differs; a participant list differs when its members or their order do. */
export function changedFields(before: MeetingState, after: MeetingState): MeetingField[] {
  const changed: MeetingField[] = [];
  if (before.title !== after.title) changed.push("title");
  if (before.description !== after.description) changed.push("description");
  if (before.startTime.getTime() !== after.startTime.getTime()) changed.push("startTime");
  if (before.duration !== after.duration) changed.push("duration");
  if (before.participants.length !== after.participants.length || before.participants.some((p, i) => p !== after.participants[i])) {
    changed.push("participants");
  }
  if (before.status !== after.status) changed.push("status");
  return changed;
}

/** Changes that participants are told about when invites are wanted (api-decisions part 5). */
const INVITE_WORTHY: readonly MeetingField[] = ["title", "description", "startTime", "duration", "participants"];

export function isInviteWorthy(changed: readonly MeetingField[]): boolean {
  return changed.some((field) => INVITE_WORTHY.includes(field));
}

/** A confirmed meeting created with sendInvites invites everyone; a draft invites no one. */
export function invitesOnCreate(status: MeetingStatus, sendInvites: boolean): boolean {
  return sendInvites && status === "confirmed";
}

/**
 * Whether an update should reach participants: cancelling a confirmed
 * meeting sends cancellations, confirming a draft sends the first invites,
 * and a confirmed meeting sends updates for invite-worthy changes. Drafts
 * and `sendInvites: false` send nothing.
 */
export function invitesOnUpdate(before: MeetingState, after: MeetingState, changed: readonly MeetingField[], sendInvites: boolean): boolean {
  if (!sendInvites) return false;
  if (after.status === "cancelled") return before.status === "confirmed";
  if (after.status !== "confirmed") return false;
  return before.status === "draft" || isInviteWorthy(changed);
}
