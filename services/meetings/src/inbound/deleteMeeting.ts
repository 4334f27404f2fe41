import { type Handler, requireCaller } from "@sched/bus";
import { AppError, notFound } from "@sched/errors";
import { enqueueEvent } from "@sched/outbox";
import { meetingDeleted, type meetingsDelete } from "@sched/proto";
import { deletedEvent, eventMsgId, newEventId } from "../domain/events.js";
import { cancelsOnDelete } from "../domain/lifecycle.js";
import { accessOf } from "../domain/meeting.js";
import { deleteMeeting as removeMeeting, findMeeting } from "../db/queries.js";
import { cancelOccurrence, deleteWholeSeries, readMeetingRef } from "./series.js";
import type { MeetingsDeps } from "./deps.js";

/**
 * DELETE /v1/meetings/:id: the way out of a mistaken meeting, ended or not
 * (PATCH refuses ended and cancelled ones). 404 unless visible, 403 unless
 * organizer. A series id removes the whole series; an occurrence id cancels
 * that occurrence (it stays, cancelled, as an exception). The row goes, and its event, committed with the removal, tells
 * invites whether to send cancellations and ai-ranking to stop counting it.
 */
export function deleteMeeting(deps: MeetingsDeps): Handler<typeof meetingsDelete> {
  return async ({ params, query }, ctx) => {
    const caller = requireCaller(ctx);
    const ref = readMeetingRef(params.id);
    if (ref.kind === "none") throw notFound("meeting");
    const now = deps.now();
    const sendInvites = query.sendInvites ?? true;
    await deps.db.transaction(async (trx) => {
      if (ref.kind === "occurrence") return cancelOccurrence(trx, ref, caller, sendInvites, now);
      const before = await findMeeting(trx, ref.id, caller.mode, true);
      if (!before) return deleteWholeSeries(trx, ref.id, caller, sendInvites, now);
      const access = accessOf(before, caller);
      if (access === "none") throw notFound("meeting");
      if (access !== "organizer") throw new AppError("forbidden", "Only the organizer of a meeting may remove it.");
      await removeMeeting(trx, before.id);
      const payload = deletedEvent(before, cancelsOnDelete(before, sendInvites, now), newEventId(), now);
      await enqueueEvent(trx, meetingDeleted, payload, eventMsgId(before.id, payload.sequence));
    });
    deps.relay.wake();
    return { status: 204 };
  };
}
