import { type Handler, replyBodyBudget, requireCaller } from "@sched/bus";
import { AppError } from "@sched/errors";
import { isId } from "@sched/ids";
import { JsonText, type meetingsList } from "@sched/proto";
import { planList, withWindow, type ListWindow } from "../domain/filters.js";
import { readBound } from "../domain/period.js";
import { findCalendarPosition, listCalendar } from "../db/queries.js";
import type { MeetingsDeps } from "./deps.js";

const DEFAULT_PAGE_SIZE = 20;

/**
 * GET /v1/meetings: one page of the caller's calendar under a filter,
 * limited to the meetings overlapping [from, to) when given, continuing
 * after `startingAfter`. The page stops short of `limit` (with
 * hasMore) where more items would not fit one bus message.
 */
export function listMeetings(deps: MeetingsDeps): Handler<typeof meetingsList> {
  return async ({ query }, ctx) => {
    const caller = requireCaller(ctx);
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const window = readWindow(query, caller.timezone);
    const whose = { mode: caller.mode, userId: caller.userId, email: caller.email };
    let after: { startTime: Date; id: string } | undefined;
    if (query.startingAfter !== undefined) {
      const id = query.startingAfter;
      after = isId("mtg", id) ? await findCalendarPosition(deps.db, { ...whose, id }) : undefined;
      if (!after) throw new AppError("invalid_request", "Invalid startingAfter: no meeting with this id in your calendar.", { param: "startingAfter" });
    }
    const plan = withWindow(planList(query.filter ?? "upcoming", deps.now()), window);
    const page = await listCalendar(deps.db, { ...whose, plan, ...(after ? { after } : {}), limit, itemBytes: replyBodyBudget(deps.maxMessageBytes()) });
    return { status: 200, body: new JsonText(`{"data":${page.itemsJson},"hasMore":${page.hasMore}}`) };
  };
}

/** `from` and `to` as instants (readBound: dates on the caller's clock); `to` must come after `from`. */
function readWindow(query: { from?: string | undefined; to?: string | undefined }, zone: string): ListWindow {
  const read = (param: "from" | "to", role: "start" | "end") => {
    const text = query[param];
    if (text === undefined) return undefined;
    const bound = readBound(text, zone, role);
    if (!bound.ok) throw new AppError("invalid_request", `Invalid ${param}: ${bound.problem}.`, { param });
    return bound.value;
  };
  const from = read("from", "start");
  const to = read("to", "end");
  if (from && to && to.getTime() <= from.getTime()) throw new AppError("invalid_request", "Invalid to: must be after from.", { param: "to" });
  return { from, to };
}
