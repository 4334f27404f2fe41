import type { Handler } from "@sched/bus";
import { isId } from "@sched/ids";
import type { Logger } from "@sched/logging";
import { enqueueEvent } from "@sched/outbox";
import { meetingResponseUpdated, type meetingsRecordResponse } from "@sched/proto";
import { newEventId, responseEvent, responseMsgId } from "../domain/events.js";
import type { MeetingRecord } from "../domain/meeting.js";
import { judgeResponse, type ResponseOutcome } from "../domain/responses.js";
import { findMeeting, saveResponse } from "../db/queries.js";
import type { MeetingsDeps } from "./deps.js";

/**
 * meetings.v1.responses.record: a participant's answer, kept on their
 * participant row with its `meeting.response_updated` event in one
 * transaction. The meeting row stays locked meanwhile, so an answer and a
 * change of the meeting's time or participants never cross.
 */
export function recordResponse(deps: MeetingsDeps, logger: Logger): Handler<typeof meetingsRecordResponse> {
  return async (request) => {
    const email = request.email.toLowerCase();
    const respondedAt = new Date(request.respondedAt);
    const now = deps.now();
    const outcome = await deps.db.transaction(async (trx): Promise<ResponseOutcome> => {
      const before = isId("mtg", request.meetingId) ? await findMeeting(trx, request.meetingId, request.mode, true) : undefined;
      const outcome = judgeResponse(before, { organizerEmail: request.organizerEmail, email, response: request.response, respondedAt });
      if (outcome !== "applied" || !before) return outcome;
      const answer = { response: request.response, respondedAt };
      const after: MeetingRecord = { ...before, responses: { ...before.responses, [email]: answer } };
      await saveResponse(trx, before.id, email, answer);
      const payload = responseEvent(after, email, before.responses[email]?.response ?? "needsAction", request.source, newEventId(), now);
      await enqueueEvent(trx, meetingResponseUpdated, payload, responseMsgId(before.id, email, respondedAt));
      return outcome;
    });
    if (outcome === "applied") deps.relay.wake();
    else logger.info({ meetingId: request.meetingId, source: request.source, outcome }, "answer not applied");
    return { outcome };
  };
}
