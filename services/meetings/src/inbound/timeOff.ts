import { type Handler, requireCaller } from "@sched/bus";
import { writeOnce } from "@sched/db/idempotent-writes";
import { AppError, notFound } from "@sched/errors";
import { isId, newId } from "@sched/ids";
import { MAX_TIME_OFF_DAYS, MAX_TIME_OFF_ENTRIES, type timeOffCreate, type timeOffDelete, type timeOffList } from "@sched/proto";
import { readPeriod } from "../domain/period.js";
import { toTimeOff, type TimeOffRecord } from "../domain/timeOff.js";
import { deleteTimeOff, insertTimeOff, listTimeOff } from "../db/queries.js";
import type { MeetingsDeps } from "./deps.js";

/** POST /v1/me/time-off → 201: busy time from now on, wherever the user's busy time counts. */
export function createTimeOff(deps: MeetingsDeps): Handler<typeof timeOffCreate> {
  return async ({ body }, ctx) => {
    const caller = requireCaller(ctx);
    const period = readPeriod(body, caller.timezone, { start: "start", end: "end" }, MAX_TIME_OFF_DAYS);
    if (!period.ok) throw new AppError("invalid_request", `Invalid ${period.param}: ${period.problem}.`, { param: period.param });
    const record: TimeOffRecord = { id: newId("off"), mode: caller.mode, userId: caller.userId, start: period.start, end: period.end, reason: body.reason ?? "", createdAt: deps.now() };
    return writeOnce(deps.db, ctx, { method: "POST", path: "/v1/me/time-off", body }, async (db) => {
      if (!(await insertTimeOff(db, record, MAX_TIME_OFF_ENTRIES))) {
        throw new AppError("invalid_request", `Invalid start: you already keep ${MAX_TIME_OFF_ENTRIES} time off entries; remove one first.`, { param: "start" });
      }
      return { status: 201 as const, body: toTimeOff(record) };
    });
  };
}

/** GET /v1/me/time-off: every entry of the caller in the key's mode, earliest first. */
export function listTimeOffHandler(deps: MeetingsDeps): Handler<typeof timeOffList> {
  return async (_request, ctx) => {
    const caller = requireCaller(ctx);
    return { status: 200, body: { data: (await listTimeOff(deps.db, caller.mode, caller.userId)).map(toTimeOff) } };
  };
}

/** DELETE /v1/me/time-off/:id → 204; another user's or another mode's id is 404. */
export function deleteTimeOffHandler(deps: MeetingsDeps): Handler<typeof timeOffDelete> {
  return async ({ params }, ctx) => {
    const caller = requireCaller(ctx);
    if (!isId("off", params.id) || !(await deleteTimeOff(deps.db, caller.mode, caller.userId, params.id))) throw notFound("time off");
    return { status: 204 };
  };
}
