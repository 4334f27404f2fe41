import { ANSWER_RESETTING_FIELDS } from "@sched/proto";
import type { MeetingEvent } from "./plan.js";

/**
 * The sequence from which earlier answers no longer hold: that of a live
 * change that asked everyone again (a new time or length), undefined for
 * any other change. Its invites carry this SEQUENCE, so a reply with a
 * lower one answered the time before.
 */
export function answerResetOf(event: MeetingEvent): { meetingId: string; sequence: number } | undefined {
  if (event.mode !== "live" || !("changedFields" in event)) return undefined;
  return event.changedFields.some((field) => ANSWER_RESETTING_FIELDS.includes(field)) ? { meetingId: event.meetingId, sequence: event.sequence } : undefined;
}

/**
 * Whether an answer (an iTIP REPLY, or the PARTSTAT in the organizer's
 * CalDAV copy) is to the meeting's present time: its SEQUENCE (RFC 5546
 * §2.1.4, the version it answers) is not below that of the last change that
 * asked everyone again. Lower, it accepted or declined a time the meeting
 * no longer has, and must not count as an answer to the new one.
 */
export function answersPresentTime(answeredSequence: number, resetSequence: number | undefined): boolean {
  return resetSequence === undefined || answeredSequence >= resetSequence;
}
