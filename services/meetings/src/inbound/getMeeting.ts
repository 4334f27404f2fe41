import { type Handler, requireCaller } from "@sched/bus";
import { notFound } from "@sched/errors";
import type { meetingsGet } from "@sched/proto";
import { accessOf, toMeeting } from "../domain/meeting.js";
import { findMeeting } from "../db/queries.js";
import { getSeriesOrOccurrence, readMeetingRef } from "./series.js";
import type { MeetingsDeps } from "./deps.js";

/** GET /v1/meetings/:id (a meeting, a series or one occurrence) → 200 for the organizer and participants, 404 for anyone else. */
export function getMeeting(deps: MeetingsDeps): Handler<typeof meetingsGet> {
  return async ({ params }, ctx) => {
    const caller = requireCaller(ctx);
    const ref = readMeetingRef(params.id);
    const record = ref.kind === "meeting" ? await findMeeting(deps.db, ref.id, caller.mode) : undefined;
    if (record) {
      if (accessOf(record, caller) === "none") throw notFound("meeting");
      return { status: 200, body: toMeeting(record) };
    }
    const meeting = await getSeriesOrOccurrence(deps, ref, caller);
    if (!meeting) throw notFound("meeting");
    return { status: 200, body: meeting };
  };
}
