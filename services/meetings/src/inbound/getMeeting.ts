import { type Handler, requireCaller } from "@sched/bus";
import { notFound } from "@sched/errors";
import { JsonText, type meetingsGet } from "@sched/proto";
import { accessOf } from "../domain/meeting.js";
import { findMeetingResource } from "../db/queries.js";
import { getSeriesOrOccurrence, readMeetingRef } from "./series.js";
import type { MeetingsDeps } from "./deps.js";

/** GET /v1/meetings/:id (a meeting, a series or one occurrence) → 200 for the organizer and participants, 404 for anyone else. */
export function getMeeting(deps: MeetingsDeps): Handler<typeof meetingsGet> {
  return async ({ params }, ctx) => {
    const caller = requireCaller(ctx);
    const ref = readMeetingRef(params.id);
    // A single meeting is sent as Postgres wrote it (findMeetingResource).
    const found = ref.kind === "meeting" ? await findMeetingResource(deps.db, ref.id, caller.mode) : undefined;
    if (found) {
      if (accessOf(found, caller) === "none") throw notFound("meeting");
      return { status: 200, body: new JsonText(found.json) };
    }
    const meeting = await getSeriesOrOccurrence(deps, ref, caller);
    if (!meeting) throw notFound("meeting");
    return { status: 200, body: meeting };
  };
}
