import { ANSWER_RESETTING_FIELDS, type GivenResponse, type MeetingField } from "@sched/proto";
import type { GivenAnswer, MeetingRecord } from "./meeting.js";
import type { Answers } from "./seriesAnswers.js";

/**
 * The answers a meeting keeps after a change: a removed participant's goes
 * with them, and a new time asks everyone again (as Google Calendar and
 * Outlook do), so every answer is dropped.
 */
export function responsesAfterChange(before: MeetingRecord["responses"], participants: readonly string[], changed: readonly MeetingField[]): MeetingRecord["responses"] {
  if (changed.some((field) => ANSWER_RESETTING_FIELDS.includes(field))) return {};
  const kept: Record<string, GivenAnswer> = {};
  for (const email of participants) {
    const answer = before[email];
    if (answer) kept[email] = answer;
  }
  return kept;
}

export type ResponseOutcome = "applied" | "unchanged" | "stale" | "unknown_meeting" | "cancelled" | "not_attendee" | "wrong_organizer";

export interface GivenReply {
  organizerEmail: string;
  email: string;
  response: GivenResponse;
  respondedAt: Date;
}

/** What an answer is judged against: a meeting, a series, or one occurrence with its own answers. */
export type Answerable = Pick<MeetingRecord, "organizerEmail" | "participants" | "status"> & { responses: Answers };

/**
 * Whether an answer applies to a meeting. Only a participant of a meeting
 * that still takes place may answer, only for the organizer it really has,
 * and an answer older than the one kept (a reply that arrived late, after a
 * newer one) changes nothing. A kept `needsAction` (an occurrence asking
 * again) is no answer.
 */
export function judgeResponse(meeting: Answerable | undefined, reply: GivenReply): ResponseOutcome {
  if (!meeting) return "unknown_meeting";
  if (meeting.organizerEmail !== reply.organizerEmail.toLowerCase()) return "wrong_organizer";
  const email = reply.email.toLowerCase();
  if (!meeting.participants.includes(email)) return "not_attendee";
  if (meeting.status === "cancelled") return "cancelled";
  const kept = meeting.responses[email];
  if (kept?.respondedAt && kept.respondedAt.getTime() > reply.respondedAt.getTime()) return "stale";
  if (kept && kept.response === reply.response) return "unchanged";
  return "applied";
}
