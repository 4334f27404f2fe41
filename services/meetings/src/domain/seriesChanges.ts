import { AppError } from "@sched/errors";
import {
  meetingCancelled,
  meetingUpdated,
  type Caller,
  type MeetingCreateBody,
  type meetingCreated,
  type meetingDeleted,
  type MeetingField,
  type MeetingStatus,
  type PayloadOf,
} from "@sched/proto";
import { newMeeting } from "./create.js";
import type { ChangeEvent } from "./events.js";
import { checkRule } from "./recurrence.js";
import type { Answers } from "./seriesAnswers.js";
import { occurrenceToMeeting, seriesOfEvent, seriesToMeeting, type ExceptionRecord, type Occurrence, type SeriesRecord } from "./series.js";
import { endTimeOf, formatTimestamp } from "./timing.js";

/** Reads a rule for a series starting at `start` in `zone`, failing as the 400 that names `recurrence`. */
export function readRule(text: string, start: Date, zone: string): { rule: string; lastStart: Date } {
  const checked = checkRule(text, start, zone);
  if (!checked.ok) throw new AppError("invalid_request", `Invalid recurrence: ${checked.problem}.`, { param: "recurrence" });
  return { rule: checked.rule, lastStart: checked.lastStart };
}

/** A new series from a validated body; the organizer's zone is kept with it, the rule's wall clock is read in it. */
export function newSeries(input: { id: string; caller: Caller; body: MeetingCreateBody & { recurrence: string }; startTime: Date; now: Date }): SeriesRecord {
  const { body, caller } = input;
  const { rule, lastStart } = readRule(body.recurrence, input.startTime, caller.timezone);
  return {
    ...newMeeting(input),
    recurrence: rule,
    timeZone: caller.timezone,
    lastEnd: endTimeOf(lastStart, body.duration),
    activeFrom: null,
  };
}

/**
 * The end of a series' range (`lastEnd`): its rule's last occurrence's end,
 * or later when an exception was moved past it (`latestExceptionEnd`: the
 * latest end among its stored exceptions). Lists, busy time and the series'
 * "has ended" read this range, so a moved occurrence stays in it.
 */
export function seriesLastEnd(series: Pick<SeriesRecord, "recurrence" | "startTime" | "timeZone" | "duration">, latestExceptionEnd: Date | null): Date {
  const ruleEnd = endTimeOf(readRule(series.recurrence, series.startTime, series.timeZone).lastStart, series.duration);
  return latestExceptionEnd && latestExceptionEnd.getTime() > ruleEnd.getTime() ? latestExceptionEnd : ruleEnd;
}

/** A series has ended when its last occurrence has. */
export function checkSeriesUpdatable(series: SeriesRecord, now: Date): void {
  if (series.status === "cancelled") throw new AppError("meeting_cancelled", "This meeting has been cancelled and can no longer be updated.");
  if (series.lastEnd.getTime() <= now.getTime()) throw new AppError("meeting_ended", "This meeting has already ended and can no longer be updated.");
}

function base(series: SeriesRecord, exceptions: readonly ExceptionRecord[], sendInvites: boolean, eventId: string, now: Date, dropped: readonly ExceptionRecord[] = []) {
  return {
    eventId,
    meetingId: series.id,
    mode: series.mode,
    organizer: { userId: series.organizerId, email: series.organizerEmail },
    meeting: seriesToMeeting(series),
    series: seriesOfEvent(series, exceptions, dropped),
    sequence: series.sequence,
    sendInvites,
    occurredAt: formatTimestamp(now),
  };
}

export function seriesCreatedEvent(series: SeriesRecord, sendInvites: boolean, eventId: string, now: Date): PayloadOf<typeof meetingCreated> {
  return base(series, [], sendInvites, eventId, now);
}

/** The event of a change of the whole series: `meeting.cancelled` when it cancels it. */
export function seriesChangeEvent(
  before: { status: MeetingStatus; participants: string[] },
  after: SeriesRecord,
  exceptions: readonly ExceptionRecord[],
  dropped: readonly ExceptionRecord[],
  changed: MeetingField[],
  sendInvites: boolean,
  eventId: string,
  now: Date,
): ChangeEvent {
  const payload = { ...base(after, exceptions, sendInvites, eventId, now, dropped), changedFields: changed, previousStatus: before.status, previousParticipants: before.participants };
  return after.status === "cancelled" && before.status !== "cancelled" ? { def: meetingCancelled, payload } : { def: meetingUpdated, payload };
}

/**
 * The event of an exception: the occurrence is the meeting (its id, series
 * id and original start), with the sequence the change took, and the series
 * as it is now (its cancelled starts included).
 */
export function exceptionEvent(
  series: SeriesRecord,
  before: Occurrence,
  after: Occurrence,
  own: Answers | undefined,
  exceptions: readonly ExceptionRecord[],
  changed: MeetingField[],
  sendInvites: boolean,
  eventId: string,
  now: Date,
): ChangeEvent {
  const payload = {
    ...base(series, exceptions, sendInvites, eventId, now),
    meetingId: after.id,
    meeting: occurrenceToMeeting(series, after, own),
    sequence: after.sequence,
    changedFields: changed,
    previousStatus: before.status,
    previousParticipants: before.participants,
  };
  return after.status === "cancelled" && before.status !== "cancelled" ? { def: meetingCancelled, payload } : { def: meetingUpdated, payload };
}

/** The event of removing a whole series: its last state marked cancelled, one sequence on. */
export function seriesDeletedEvent(before: SeriesRecord, exceptions: readonly ExceptionRecord[], sendInvites: boolean, eventId: string, now: Date): PayloadOf<typeof meetingDeleted> {
  const gone: SeriesRecord = { ...before, status: "cancelled", sequence: before.sequence + 1 };
  return { ...base(gone, exceptions, sendInvites, eventId, now), previousStatus: before.status, previousParticipants: before.participants };
}
