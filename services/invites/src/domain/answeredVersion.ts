import { ANSWER_RESETTING_FIELDS, type MeetingField, type Mode } from "@sched/proto";

/** What of a meeting event says whether it asked everyone again: a created or deleted meeting's has no changed fields. */
interface ChangeOfMeeting {
  meetingId: string;
  mode: Mode;
  sequence: number;
  changedFields?: readonly MeetingField[];
}

/**
 * The sequence from which earlier answers no longer hold: that of a live
 * change that asked everyone again (a new time or length), undefined for
 * any other change. Its invites carry this SEQUENCE, so a reply with a
 * lower one answered the time before.
 */
export function answerResetOf(event: ChangeOfMeeting): { meetingId: string; sequence: number } | undefined {
  if (event.mode !== "live" || !event.changedFields) return undefined;
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
