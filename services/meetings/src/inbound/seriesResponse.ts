import type { Knex } from "@sched/db";
import { enqueueEvent } from "@sched/outbox";
import { meetingResponseUpdated, type AttendeeResponse, type Meeting, type Mode, type ResponseSource } from "@sched/proto";
import { newEventId, responseEvent, responseMsgId } from "../domain/events.js";
import { judgeResponse, type GivenReply, type ResponseOutcome } from "../domain/responses.js";
import { occurrenceAnswers, type Answers } from "../domain/seriesAnswers.js";
import { occurrenceToMeeting, seriesToMeeting, type SeriesRecord } from "../domain/series.js";
import { answersOfOccurrence, findSeries, saveOccurrenceAnswers, saveSeriesAnswers } from "../db/queries.js";
import { findOccurrence } from "./series.js";

/** What of the request is not the answer itself. */
type RecordRequest = { mode: Mode; source: ResponseSource };

/** Own answers of one occurrence, by e-mail. */
export async function ownAnswers(db: Knex, seriesId: string, originalStart: Date): Promise<Answers> {
  return Object.fromEntries((await answersOfOccurrence(db, seriesId, originalStart)).map((a) => [a.email, { response: a.response, respondedAt: a.respondedAt }]));
}

/**
 * An answer to a whole series (`originalStart` absent) or to one of its
 * occurrences, under the series' row lock, with its event. A series answer
 * is every occurrence's without one of its own; an occurrence's is kept
 * with it. An occurrence answer equal to the series' changes nothing anyone
 * sees: it is kept (it outlives a later series answer) but sends no event.
 */
export async function recordSeriesResponse(trx: Knex.Transaction, request: RecordRequest, reply: GivenReply, ref: { seriesId: string; originalStart?: Date }, now: Date): Promise<ResponseOutcome> {
  const series = await findSeries(trx, ref.seriesId, request.mode, true);
  if (!series) return "unknown_meeting";
  const { email } = reply;
  const answer = { response: reply.response, respondedAt: reply.respondedAt };
  if (!ref.originalStart) {
    const outcome = judgeResponse(series, reply);
    if (outcome !== "applied") return outcome;
    const after: SeriesRecord = { ...series, responses: { ...series.responses, [email]: answer } };
    await saveSeriesAnswers(trx, after);
    await publish(trx, request, series, seriesToMeeting(after), series.responses[email]?.response ?? "needsAction", reply, now);
    return outcome;
  }
  const occurrence = await findOccurrence(trx, series, ref.originalStart);
  if (!occurrence) return "unknown_meeting";
  const own = await ownAnswers(trx, series.id, ref.originalStart);
  const outcome = judgeResponse({ organizerEmail: series.organizerEmail, participants: occurrence.participants, status: occurrence.status, responses: own }, reply);
  if (outcome !== "applied") return outcome;
  await saveOccurrenceAnswers(trx, [{ seriesId: series.id, originalStart: ref.originalStart, email, ...answer }]);
  const previous = occurrenceAnswers(series.responses, own)[email]?.response ?? "needsAction";
  if (previous === reply.response) return "unchanged";
  await publish(trx, request, series, occurrenceToMeeting(series, occurrence, { ...own, [email]: answer }), previous, reply, now);
  return outcome;
}

async function publish(trx: Knex.Transaction, request: RecordRequest, series: SeriesRecord, meeting: Meeting, previous: AttendeeResponse, reply: GivenReply, now: Date): Promise<void> {
  const payload = responseEvent({ meeting, mode: series.mode, organizerId: series.organizerId, organizerEmail: series.organizerEmail }, reply.email, previous, request.source, newEventId(), now);
  await enqueueEvent(trx, meetingResponseUpdated, payload, responseMsgId(meeting.id, reply.email, reply.respondedAt));
}
