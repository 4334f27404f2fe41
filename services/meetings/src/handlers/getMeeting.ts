import { type Handler, requireCaller } from "@sched/bus";
import { notFound } from "@sched/errors";
import { isId } from "@sched/ids";
import type { meetingsGet } from "@sched/proto";
import { accessOf, toMeeting } from "../domain/meeting.js";
import { findMeeting } from "../db/queries.js";
import type { MeetingsDeps } from "./deps.js";

/** GET /v1/meetings/:id → 200 for the organizer and participants, 404 for anyone else. */
export function getMeeting(deps: MeetingsDeps): Handler<typeof meetingsGet> {
  return async ({ params }, ctx) => {
    const caller = requireCaller(ctx);
    if (!isId("mtg", params.id)) throw notFound("meeting");
    const record = await findMeeting(deps.db, params.id, caller.mode);
    if (!record || accessOf(record, caller) === "none") throw notFound("meeting");
    return { status: 200, body: toMeeting(record) };
  };
}
