import { AppError } from "@sched/errors";
import type { Duration, MeetingStatus } from "@sched/proto";
import { hasEnded } from "./timing.js";

/** The moves PATCH may make (api-decisions part 5); staying put is not a move. */
const ALLOWED_MOVES: Readonly<Record<MeetingStatus, readonly MeetingStatus[]>> = {
  draft: ["confirmed", "cancelled"],
  confirmed: ["cancelled"],
  cancelled: [],
};

export function isAllowedMove(from: MeetingStatus, to: MeetingStatus): boolean {
  return from === to || ALLOWED_MOVES[from].includes(to);
}

/** Refuses a status move that is not allowed, naming the field. */
export function checkStatusMove(from: MeetingStatus, to: MeetingStatus): void {
  if (!isAllowedMove(from, to)) {
    throw new AppError("invalid_request", `Invalid status: a ${from} meeting cannot become ${to}.`, { param: "status" });
  }
}

/** Whether the meeting may still change: cancelled and ended meetings are final. */
export function checkUpdatable(meeting: { status: MeetingStatus; startTime: Date; duration: Duration }, now: Date): void {
  if (meeting.status === "cancelled") throw new AppError("meeting_cancelled", "This meeting has been cancelled and can no longer be updated.");
  if (hasEnded(meeting, now)) throw new AppError("meeting_ended", "This meeting has already ended and can no longer be updated.");
}

/**
 * Whether removing a meeting owes its participants a cancellation: only a
 * confirmed meeting that has not ended holds invitations worth taking back
 * (a draft sent none; a cancelled one sent its cancellation already).
 */
export function cancelsOnDelete(meeting: { status: MeetingStatus; startTime: Date; duration: Duration }, sendInvites: boolean, now: Date): boolean {
  return sendInvites && meeting.status === "confirmed" && !hasEnded(meeting, now);
}
