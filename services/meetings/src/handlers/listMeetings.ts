import { replyBodyBudget, type Handler } from "@sched/bus";
import { AppError } from "@sched/errors";
import { isId } from "@sched/ids";
import { JsonText, type meetingsList } from "@sched/proto";
import { planList } from "../domain/filters.js";
import { findCalendarPosition, listCalendar } from "../db/queries.js";
import { requireCaller, type MeetingsDeps } from "./deps.js";

export const DEFAULT_PAGE_SIZE = 20;

/**
 * GET /v1/meetings: one page of the caller's calendar under a filter,
 * continuing after `startingAfter`. The page stops short of `limit` (with
 * hasMore) where more items would not fit one bus message.
 */
export function listMeetings(deps: MeetingsDeps): Handler<typeof meetingsList> {
  return async ({ query }, ctx) => {
    const caller = requireCaller(ctx);
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const whose = { mode: caller.mode, userId: caller.userId, email: caller.email };
    let after: { startTime: Date; id: string } | undefined;
    if (query.startingAfter !== undefined) {
      const id = query.startingAfter;
      after = isId("mtg", id) ? await findCalendarPosition(deps.db, { ...whose, id }) : undefined;
      if (!after) throw new AppError("invalid_request", "Invalid startingAfter: no meeting with this id in your calendar.", { param: "startingAfter" });
    }
    const plan = planList(query.filter ?? "upcoming", deps.now());
    const page = await listCalendar(deps.db, { ...whose, plan, ...(after ? { after } : {}), limit, itemBytes: replyBodyBudget(deps.maxMessageBytes()) });
    return { status: 200, body: new JsonText(`{"data":${page.itemsJson},"hasMore":${page.hasMore}}`) };
  };
}
