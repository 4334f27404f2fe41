import type { Handler } from "@sched/bus";
import type { Logger } from "@sched/logging";
import { enqueueEvent } from "@sched/outbox";
import { meetingResponseUpdated, type meetingsRecordResponse } from "@sched/proto";
import { newEventId, responseEvent, responseMsgId } from "../domain/events.js";
import { toMeeting, type MeetingRecord } from "../domain/meeting.js";
import { judgeResponse, type ResponseOutcome } from "../domain/responses.js";
import { findMeeting, saveResponse } from "../db/queries.js";
import { readMeetingRef } from "./series.js";
import { recordSeriesResponse } from "./seriesResponse.js";
import type { MeetingsDeps } from "./deps.js";

/**
 * meetings.v1.responses.record: a participant's answer, kept on their
 * participant row with its `meeting.response_updated` event in one
 * transaction. The meeting row stays locked meanwhile, so an answer and a
 * change of the meeting's time or participants never cross. An id that is
 * no single meeting may be a series' or one occurrence's (docs/recurrence.md).
 */
export function recordResponse(deps: MeetingsDeps, logger: Logger): Handler<typeof meetingsRecordResponse> {
  return async (request) => {
    const reply = { organizerEmail: request.organizerEmail, email: request.email.toLowerCase(), response: request.response, respondedAt: new Date(request.respondedAt) };
    const now = deps.now();
    const ref = readMeetingRef(request.meetingId);
    const outcome = await deps.db.transaction(async (trx): Promise<ResponseOutcome> => {
      const before = ref.kind === "meeting" ? await findMeeting(trx, ref.id, request.mode, true) : undefined;
      if (!before) {
        if (ref.kind === "none") return "unknown_meeting";
        return recordSeriesResponse(trx, request, reply, ref.kind === "meeting" ? { seriesId: ref.id } : ref, now);
      }
      const outcome = judgeResponse(before, reply);
      if (outcome !== "applied") return outcome;
      const answer = { response: request.response, respondedAt: reply.respondedAt };
      const after: MeetingRecord = { ...before, responses: { ...before.responses, [reply.email]: answer } };
      await saveResponse(trx, before.id, reply.email, answer);
      const payload = responseEvent({ ...after, meeting: toMeeting(after) }, reply.email, before.responses[reply.email]?.response ?? "needsAction", request.source, newEventId(), now);
      await enqueueEvent(trx, meetingResponseUpdated, payload, responseMsgId(before.id, reply.email, reply.respondedAt));
      return outcome;
    });
    if (outcome === "applied") deps.relay.wake();
    else logger.info({ meetingId: request.meetingId, source: request.source, outcome }, "answer not applied");
    return { outcome };
  };
}
