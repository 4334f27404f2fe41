import { type Handler, requireCaller } from "@sched/bus";
import { AppError, notFound } from "@sched/errors";
import { isId } from "@sched/ids";
import { enqueueEvent } from "@sched/outbox";
import { meetingDeleted, type meetingsDelete } from "@sched/proto";
import { deletedEvent, eventMsgId, newEventId } from "../domain/events.js";
import { cancelsOnDelete } from "../domain/lifecycle.js";
import { accessOf } from "../domain/meeting.js";
import { deleteMeeting as removeMeeting, findMeeting } from "../db/queries.js";
import type { MeetingsDeps } from "./deps.js";

/**
 * DELETE /v1/meetings/:id: the way out of a mistaken meeting, ended or not
 * (PATCH refuses ended and cancelled ones). 404 unless visible, 403 unless
 * organizer. The row goes, and its event, committed with the removal, tells
 * invites whether to send cancellations and ai-ranking to stop counting it.
 */
export function deleteMeeting(deps: MeetingsDeps): Handler<typeof meetingsDelete> {
  return async ({ params, query }, ctx) => {
    const caller = requireCaller(ctx);
    if (!isId("mtg", params.id)) throw notFound("meeting");
    const now = deps.now();
    await deps.db.transaction(async (trx) => {
      const before = await findMeeting(trx, params.id, caller.mode, true);
      const access = before ? accessOf(before, caller) : "none";
      if (!before || access === "none") throw notFound("meeting");
      if (access !== "organizer") throw new AppError("forbidden", "Only the organizer of a meeting may remove it.");
      await removeMeeting(trx, before.id);
      const payload = deletedEvent(before, cancelsOnDelete(before, query.sendInvites ?? true, now), newEventId(), now);
      await enqueueEvent(trx, meetingDeleted, payload, eventMsgId(before.id, payload.sequence));
    });
    deps.relay.wake();
    return { status: 204 };
  };
}
