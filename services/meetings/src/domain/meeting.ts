import type { Caller, Duration, GivenResponse, Meeting, MeetingStatus, Mode } from "@sched/proto";
import { attendeesOf } from "./seriesAnswers.js";
import { formatTimestamp } from "./timing.js";

/** A meeting as the service holds it. */
export interface MeetingRecord {
  id: string;
  mode: Mode;
  organizerId: string;
  organizerEmail: string;
  title: string;
  description: string;
  startTime: Date;
  duration: Duration;
  /** Lower-cased, de-duplicated, in the order given. */
  participants: string[];
  status: MeetingStatus;
  /** 1 at creation, one more on every change. */
  sequence: number;
  createdAt: Date;
  /** The answers given so far, by participant; a participant missing here has not answered. */
  responses: Readonly<Record<string, GivenAnswer>>;
}

/** A participant's answer and when they gave it. */
export interface GivenAnswer {
  response: GivenResponse;
  respondedAt: Date;
}

/** What a caller may do with a meeting of their mode. */
export type Access = "organizer" | "participant" | "none";

/**
 * The calendar rule: a user sees the meetings they organize and those whose
 * participants include their account e-mail (api-decisions part 5).
 */
export function accessOf(meeting: Pick<MeetingRecord, "mode" | "organizerId" | "participants">, caller: Pick<Caller, "userId" | "email" | "mode">): Access {
  if (meeting.mode !== caller.mode) return "none";
  if (meeting.organizerId === caller.userId) return "organizer";
  if (meeting.participants.includes(caller.email.toLowerCase())) return "participant";
  return "none";
}

export function toMeeting(record: MeetingRecord): Meeting {
  return {
    id: record.id,
    title: record.title,
    description: record.description,
    startTime: formatTimestamp(record.startTime),
    duration: record.duration,
    participants: record.participants,
    status: record.status,
    organizer: record.organizerEmail,
    createdAt: formatTimestamp(record.createdAt),
    attendees: attendeesOf(record.participants, record.responses),
    recurrence: null,
    seriesId: null,
    originalStartTime: null,
  };
}
