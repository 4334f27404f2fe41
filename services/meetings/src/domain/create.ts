import type { Caller, MeetingCreateBody } from "@sched/proto";
import type { MeetingRecord } from "./meeting.js";
import { truncateToSecond } from "./timing.js";

/** A new meeting from a validated body; `startTime` is the body's, already read in the caller's zone. */
export function newMeeting(input: { id: string; caller: Caller; body: MeetingCreateBody; startTime: Date; now: Date }): MeetingRecord {
  const { body, caller } = input;
  return {
    id: input.id,
    mode: caller.mode,
    organizerId: caller.userId,
    organizerEmail: caller.email.toLowerCase(),
    title: body.title,
    description: body.description ?? "",
    startTime: input.startTime,
    duration: body.duration,
    participants: body.participants,
    status: body.status ?? "confirmed",
    sequence: 1,
    createdAt: truncateToSecond(input.now),
    responses: {},
  };
}
