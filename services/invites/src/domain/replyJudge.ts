import { occurrenceIdOf, type GivenResponse } from "@sched/proto";
import { meetingIdOfUid } from "./ics.js";
import { responseOfPartstat, type ItipReply, type Parsed } from "./itipReply.js";

/** An answer that a reply proves, ready for meetings to record. */
export interface ProvenAnswer {
  /** The meeting or series the UID names, or the occurrence of that series RECURRENCE-ID names (its id as meetings spells it). */
  meetingId: string;
  organizerEmail: string;
  email: string;
  response: GivenResponse;
  respondedAt: Date;
}

export interface ReplyCheck {
  /** The token of the reply address the message came to. */
  token: string;
  uidDomain: string;
  /** Whether the token is the one made for this participant of this meeting. */
  tokenMatches: (token: string, meetingId: string, participant: string) => boolean;
  now: Date;
}

/**
 * What a REPLY proves. The meeting is the one its UID names (ours only);
 * the attendee is the one among its ATTENDEEs the reply address was made
 * for, so a reply for someone else, or sent to another invite's address,
 * proves nothing. The time answered is the client's DTSTAMP, but never
 * later than now: a clock in the future must not make an answer win
 * forever. Whether the ORGANIZER is the meeting's is for meetings to check.
 * A reply with RECURRENCE-ID answers one occurrence of a series: the reply
 * address is the series' (one calendar object), the answer the occurrence's.
 */
export function proveAnswer(reply: ItipReply, check: ReplyCheck): Parsed<ProvenAnswer> {
  const meetingId = meetingIdOfUid(reply.uid, check.uidDomain);
  if (!meetingId) return { ok: false, problem: "UID of no meeting of ours" };
  const answering = reply.attendees.filter((a) => check.tokenMatches(check.token, meetingId, a.email));
  if (answering.length !== 1) return { ok: false, problem: "no ATTENDEE is the one this reply address was made for" };
  const attendee = answering[0]!;
  const response = responseOfPartstat(attendee.partstat);
  if (!response) return { ok: false, problem: `PARTSTAT ${attendee.partstat} answers nothing` };
  const stamp = reply.stamp && reply.stamp.getTime() < check.now.getTime() ? reply.stamp : check.now;
  const answered = reply.recurrenceId ? occurrenceIdOf(meetingId, reply.recurrenceId) : meetingId;
  return { ok: true, value: { meetingId: answered, organizerEmail: reply.organizer, email: attendee.email, response, respondedAt: new Date(Math.floor(stamp.getTime() / 1_000) * 1_000) } };
}
