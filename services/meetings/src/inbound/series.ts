import { AppError, notFound } from "@sched/errors";
import { isId } from "@sched/ids";
import { enqueueEvent } from "@sched/outbox";
import { ANSWER_RESETTING_FIELDS, DURATION_MINUTES, meetingDeleted, type Caller, type Meeting, type MeetingField } from "@sched/proto";
import { applyPatch, changedFields, invitesOnUpdate, type MeetingPatch } from "../domain/changes.js";
import { eventMsgId, newEventId } from "../domain/events.js";
import { cancelsOnDelete, checkStatusMove, checkUpdatable } from "../domain/lifecycle.js";
import { isOccurrence, occurrenceStarts, readOccurrenceId } from "../domain/recurrence.js";
import { occurrenceAccess, occurrenceOf, occurrenceToMeeting, ruleOf, seesOccurrence, seriesAccess, seriesToMeeting, type ExceptionRecord, type Occurrence, type SeriesRecord } from "../domain/series.js";
import { checkSeriesUpdatable, exceptionEvent, readRule, seriesChangeEvent, seriesDeletedEvent, seriesLastEnd } from "../domain/seriesChanges.js";
import { checkEventSize } from "../domain/eventSize.js";
import { endTimeOf } from "../domain/timing.js";
import { responsesAfterChange } from "../domain/responses.js";
import { retimedExceptions } from "../domain/retimedExceptions.js";
import { askAgain } from "../domain/seriesAnswers.js";
import {
  deleteSeries,
  dropOccurrenceAnswersAfter,
  eventExceptions,
  exceptionStartsBefore,
  findException,
  findSeries,
  latestExceptionEnd,
  listedOnAnException,
  saveExceptions,
  saveOccurrenceAnswers,
  takeExceptionsEndingAfter,
  updateSeries,
} from "../db/queries.js";
import { ownAnswers } from "./seriesResponse.js";
import type { Knex } from "@sched/db";
import type { MeetingsDeps } from "./deps.js";

/** What an id names: a single meeting or a series (`mtg_…`), an occurrence, or nothing. */
export type MeetingRef = { kind: "meeting"; id: string } | { kind: "occurrence"; seriesId: string; originalStart: Date } | { kind: "none" };

export function readMeetingRef(id: string): MeetingRef {
  if (isId("mtg", id)) return { kind: "meeting", id };
  const occurrence = readOccurrenceId(id);
  return occurrence && isId("mtg", occurrence.seriesId) ? { kind: "occurrence", ...occurrence } : { kind: "none" };
}

/** A visible series' occurrence at an original start, or undefined when the rule gives none there. */
export async function findOccurrence(db: Knex, series: SeriesRecord, originalStart: Date): Promise<Occurrence | undefined> {
  const exception = await findException(db, series.id, originalStart);
  if (exception) return occurrenceOf(series, originalStart, exception);
  if (!isOccurrence(ruleOf(series), originalStart)) return undefined;
  if (series.activeFrom && endTimeOf(originalStart, series.duration).getTime() <= series.activeFrom.getTime()) return undefined;
  return occurrenceOf(series, originalStart, undefined);
}

/** GET of a series id (after the single meetings missed) or an occurrence id; undefined: 404. */
export async function getSeriesOrOccurrence(deps: MeetingsDeps, ref: MeetingRef, caller: Caller): Promise<Meeting | undefined> {
  if (ref.kind === "none") return undefined;
  const series = await findSeries(deps.db, ref.kind === "meeting" ? ref.id : ref.seriesId, caller.mode);
  if (!series) return undefined;
  if (ref.kind === "meeting") return (await seriesAccessOf(deps.db, series, caller)) === "none" ? undefined : seriesToMeeting(series);
  // An occurrence is seen by whom it lists, as lists and busy time see it (an exception may add or leave out someone).
  const occurrence = await findOccurrence(deps.db, series, ref.originalStart);
  return occurrence && seesOccurrence(series, occurrence, caller) ? occurrenceToMeeting(series, occurrence, await ownAnswers(deps.db, series.id, occurrence.originalStart)) : undefined;
}

/** seriesAccess, asking the exceptions only for someone the series itself does not list. */
async function seriesAccessOf(db: Knex, series: SeriesRecord, caller: Caller): Promise<ReturnType<typeof seriesAccess>> {
  const access = seriesAccess(series, caller);
  if (access !== "none" || series.mode !== caller.mode) return access;
  return seriesAccess(series, caller, await listedOnAnException(db, series.id, caller.email));
}

function checkAccess(access: ReturnType<typeof seriesAccess>, verb: string): void {
  if (access === "none") throw notFound("meeting");
  if (access !== "organizer") throw new AppError("forbidden", `Only the organizer of a meeting may ${verb} it.`);
}

/** The series, locked, for its organizer: 404 for whom none of it is visible, 403 for anyone else who sees it. */
async function lockedSeries(trx: Knex.Transaction, id: string, caller: Caller, verb: string): Promise<SeriesRecord> {
  const series = await findSeries(trx, id, caller.mode, true);
  if (!series) throw notFound("meeting");
  checkAccess(await seriesAccessOf(trx, series, caller), verb);
  return series;
}

/** The series, locked, and one of its occurrences, for the organizer: 404 unless the occurrence is visible as GET sees it, then 403 unless organizer. */
async function lockedOccurrence(trx: Knex.Transaction, ref: { seriesId: string; originalStart: Date }, caller: Caller, verb: string): Promise<{ series: SeriesRecord; before: Occurrence }> {
  const series = await findSeries(trx, ref.seriesId, caller.mode, true);
  const before = series ? await findOccurrence(trx, series, ref.originalStart) : undefined;
  if (!series || !before) throw notFound("meeting");
  checkAccess(occurrenceAccess(series, before, caller), verb);
  return { series, before };
}

/**
 * Changes one occurrence: it becomes (or stays) an exception with the
 * series' next sequence number, and its event is about the occurrence.
 */
export async function updateOccurrence(
  trx: Knex.Transaction,
  ref: { seriesId: string; originalStart: Date },
  caller: Caller,
  patch: MeetingPatch & { recurrence?: string | undefined },
  sendInvites: boolean,
  now: Date,
): Promise<{ meeting: Meeting; changed: boolean }> {
  const { series, before } = await lockedOccurrence(trx, ref, caller, "update");
  if (patch.recurrence !== undefined) throw new AppError("invalid_request", "Invalid recurrence: one occurrence has no rule of its own; change the series instead.", { param: "recurrence" });
  checkUpdatable(before, now);
  if (patch.status !== undefined) checkStatusMove(before.status, patch.status);
  const state = applyPatch(before, patch);
  const changed = changedFields(before, state);
  let own = await ownAnswers(trx, series.id, before.originalStart);
  if (changed.length === 0) return { meeting: occurrenceToMeeting(series, before, own), changed: false };
  const sequence = series.sequence + 1;
  const after: Occurrence = { ...before, ...state, sequence, exception: true };
  await writeException(trx, { ...series, sequence }, after, now);
  if (changed.some((field) => ANSWER_RESETTING_FIELDS.includes(field))) {
    // A new time asks everyone again, the series' answers included: the occurrence keeps `needsAction` of its own.
    const asked = askAgain(series.id, after);
    await saveOccurrenceAnswers(trx, asked);
    own = Object.fromEntries(asked.map((a) => [a.email, a]));
  }
  const exceptions = await eventExceptions(trx, series.id, now);
  const event = exceptionEvent({ ...series, sequence }, before, after, own, exceptions, changed, invitesOnUpdate(before, state, changed, sendInvites), newEventId(), now);
  checkEventSize(event.payload);
  await enqueueEvent(trx, event.def, event.payload, eventMsgId(after.id, sequence));
  return { meeting: occurrenceToMeeting(series, after, own), changed: true };
}

async function writeException(trx: Knex.Transaction, series: SeriesRecord, o: Occurrence, now: Date): Promise<void> {
  const { title, description, startTime, duration, participants, status, sequence } = o;
  await saveExceptions(trx, [{ seriesId: series.id, originalStart: o.originalStart, title, description, startTime, duration, participants, status, sequence }]);
  await updateSeries(trx, { ...series, lastEnd: seriesLastEnd(series, await latestExceptionEnd(trx, series.id)) }, now);
}

/**
 * Changes a whole series: every occurrence not yet ended. The occurrences
 * that have ended are kept as they were (stored as exceptions, at most the
 * series' 730) and the rule stops generating them (`activeFrom`). A new
 * time or rule keeps the exceptions of occurrences not yet ended whose day
 * the new series still has an occurrence on, and drops the others
 * (domain/retimedExceptions.ts). A new time or duration asks everyone again:
 * the series' answers and the not yet ended occurrences' own answers go.
 */
export async function updateWholeSeries(
  trx: Knex.Transaction,
  id: string,
  caller: Caller,
  patch: MeetingPatch & { recurrence?: string | undefined },
  sendInvites: boolean,
  now: Date,
): Promise<{ meeting: Meeting; changed: boolean }> {
  const series = await lockedSeries(trx, id, caller, "update");
  checkSeriesUpdatable(series, now);
  if (patch.status !== undefined) checkStatusMove(series.status, patch.status);
  const state = applyPatch(series, patch);
  const changed: MeetingField[] = changedFields(series, state);
  let rule = series.recurrence;
  const retimed = patch.recurrence !== undefined || changed.includes("startTime") || changed.includes("duration");
  if (patch.recurrence !== undefined || changed.includes("startTime")) {
    const read = readRule(patch.recurrence ?? series.recurrence, state.startTime, series.timeZone);
    if (read.rule !== series.recurrence) changed.push("recurrence");
    rule = read.rule;
  }
  if (changed.length === 0) return { meeting: seriesToMeeting(series), changed: false };

  const sequence = series.sequence + 1;
  let activeFrom = series.activeFrom;
  if (series.startTime.getTime() < now.getTime()) {
    // Keep the occurrences that have ended as they were: the window is the series' past only.
    const kept = new Set((await exceptionStartsBefore(trx, series.id, now)).map((d) => d.getTime()));
    const from = series.activeFrom ?? series.startTime;
    const ended: ExceptionRecord[] = occurrenceStarts(ruleOf(series), from, now)
      .filter((start) => endTimeOf(start, series.duration).getTime() <= now.getTime() && !kept.has(start.getTime()))
      .map((start) => {
        const o = occurrenceOf(series, start, undefined);
        return { seriesId: series.id, originalStart: start, title: o.title, description: o.description, startTime: o.startTime, duration: o.duration, participants: o.participants, status: o.status, sequence: series.sequence };
      });
    await saveExceptions(trx, ended);
    activeFrom = now;
  }
  const responses = responsesAfterChange(series.responses, state.participants, changed);
  // The rule's own last end first (retimedExceptions expands up to it); moved exceptions may widen it below.
  const lastEnd = seriesLastEnd({ ...state, recurrence: rule, timeZone: series.timeZone }, null);
  const after: SeriesRecord = { ...series, ...state, recurrence: rule, lastEnd, activeFrom, sequence, responses };
  let dropped: ExceptionRecord[] = [];
  if (retimed) {
    const taken = await takeExceptionsEndingAfter(trx, series.id, now);
    const kept = retimedExceptions(series, after, taken, now);
    await saveExceptions(trx, kept);
    // An occurrence the new series does not have at the same start is gone for calendars (RECURRENCE-ID names the start):
    // those told of it alone hear it is cancelled; a kept one comes again at its new start among the changed occurrences.
    const keptStarts = new Set(kept.map((e) => e.originalStart.getTime()));
    dropped = taken.filter((e) => !keptStarts.has(e.originalStart.getTime()));
  }
  if (changed.some((field) => ANSWER_RESETTING_FIELDS.includes(field))) await dropOccurrenceAnswersAfter(trx, series.id, new Date(now.getTime() - DURATION_MINUTES[series.duration] * 60_000));
  after.lastEnd = seriesLastEnd(after, await latestExceptionEnd(trx, series.id));
  await updateSeries(trx, after, now);
  const exceptions = await eventExceptions(trx, series.id, now);
  const event = seriesChangeEvent(series, after, exceptions, dropped, changed, invitesOnUpdate(series, state, changed, sendInvites), newEventId(), now);
  checkEventSize(event.payload);
  await enqueueEvent(trx, event.def, event.payload, eventMsgId(after.id, sequence));
  return { meeting: seriesToMeeting(after), changed: true };
}

/** DELETE of one occurrence: it is cancelled (an exception), and its participants hear of it as of a cancelled meeting. */
export async function cancelOccurrence(trx: Knex.Transaction, ref: { seriesId: string; originalStart: Date }, caller: Caller, sendInvites: boolean, now: Date): Promise<void> {
  const { series, before } = await lockedOccurrence(trx, ref, caller, "remove");
  if (before.status === "cancelled") return;
  const sequence = series.sequence + 1;
  const after: Occurrence = { ...before, status: "cancelled", sequence, exception: true };
  await writeException(trx, { ...series, sequence }, after, now);
  const exceptions = await eventExceptions(trx, series.id, now);
  const own = await ownAnswers(trx, series.id, before.originalStart);
  const event = exceptionEvent({ ...series, sequence }, before, after, own, exceptions, ["status"], cancelsOnDelete(before, sendInvites, now), newEventId(), now);
  await enqueueEvent(trx, event.def, event.payload, eventMsgId(after.id, sequence));
}

/** DELETE of a series id: the whole series goes. */
export async function deleteWholeSeries(trx: Knex.Transaction, id: string, caller: Caller, sendInvites: boolean, now: Date): Promise<void> {
  const series = await lockedSeries(trx, id, caller, "remove");
  const exceptions = await eventExceptions(trx, series.id, now);
  await deleteSeries(trx, series.id);
  const owed = sendInvites && series.status === "confirmed" && series.lastEnd.getTime() > now.getTime();
  const payload = seriesDeletedEvent(series, exceptions, owed, newEventId(), now);
  await enqueueEvent(trx, meetingDeleted, payload, eventMsgId(series.id, payload.sequence));
}
