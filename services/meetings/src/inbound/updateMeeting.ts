import { type Handler, requireCaller } from "@sched/bus";
import { AppError, notFound } from "@sched/errors";
import { enqueueEvent } from "@sched/outbox";
import type { Meeting, meetingsUpdate } from "@sched/proto";
import { applyPatch, changedFields, invitesOnUpdate, type MeetingPatch } from "../domain/changes.js";
import { readDateTime } from "../domain/datetime.js";
import { changeEvent, eventMsgId, newEventId } from "../domain/events.js";
import { checkStatusMove, checkUpdatable } from "../domain/lifecycle.js";
import { accessOf, toMeeting, type MeetingRecord } from "../domain/meeting.js";
import { responsesAfterChange } from "../domain/responses.js";
import { findMeeting, updateMeeting as saveMeeting } from "../db/queries.js";
import { readMeetingRef, updateOccurrence, updateWholeSeries } from "./series.js";
import type { MeetingsDeps } from "./deps.js";

/**
 * PATCH /v1/meetings/:id: a meeting, a whole series, or one occurrence
 * (inbound/series.ts). Checks run in the documented order: validation,
 * then the meeting (404 unless visible, 403 unless organizer, 400 when
 * cancelled or ended), then the status move. A change bumps the sequence and
 * commits its event with it; a request that changes nothing writes nothing.
 */
export function updateMeeting(deps: MeetingsDeps): Handler<typeof meetingsUpdate> {
  return async ({ params, body }, ctx) => {
    const caller = requireCaller(ctx);
    const { sendInvites, startTime, recurrence, ...rest } = body;
    const patch: MeetingPatch = { ...rest, ...(startTime !== undefined ? { startTime: readDateTime(startTime, caller.timezone, "startTime") } : {}) };
    const ref = readMeetingRef(params.id);
    if (ref.kind === "none") throw notFound("meeting");
    const now = deps.now();

    const result = await deps.db.transaction(async (trx): Promise<{ meeting: Meeting; changed: boolean }> => {
      if (ref.kind === "occurrence") return updateOccurrence(trx, ref, caller, { ...patch, recurrence }, sendInvites ?? true, now);
      const before = await findMeeting(trx, ref.id, caller.mode, true);
      if (!before) return updateWholeSeries(trx, ref.id, caller, { ...patch, recurrence }, sendInvites ?? true, now);
      const access = accessOf(before, caller);
      if (access === "none") throw notFound("meeting");
      if (recurrence !== undefined) throw new AppError("invalid_request", "Invalid recurrence: a single meeting cannot become a series; create a recurring meeting instead.", { param: "recurrence" });
      if (access !== "organizer") throw new AppError("forbidden", "Only the organizer of a meeting may update it.");
      checkUpdatable(before, now);
      if (patch.status !== undefined) checkStatusMove(before.status, patch.status);

      const state = applyPatch(before, patch);
      const changed = changedFields(before, state);
      if (changed.length === 0) return { meeting: toMeeting(before), changed: false };
      const after: MeetingRecord = { ...before, ...state, sequence: before.sequence + 1, responses: responsesAfterChange(before.responses, state.participants, changed) };
      await saveMeeting(trx, after, now);
      const event = changeEvent(before, after, changed, invitesOnUpdate(before, state, changed, sendInvites ?? true), newEventId(), now);
      await enqueueEvent(trx, event.def, event.payload, eventMsgId(after.id, after.sequence));
      return { meeting: toMeeting(after), changed: true };
    });

    if (result.changed) deps.relay.wake();
    return { status: 200, body: result.meeting };
  };
}
