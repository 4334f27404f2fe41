import { type Handler, replyBodyBudget, requireCaller } from "@sched/bus";
import { AppError } from "@sched/errors";
import { JsonText, type Caller, type meetingsList, type Mode } from "@sched/proto";
import { planList, withWindow, type ListWindow } from "../domain/filters.js";
import { listAnswer } from "../domain/listAnswer.js";
import { readBound } from "../domain/period.js";
import { mergePage, occurrencesForPage, singleEntries, type Position } from "../domain/occurrencePage.js";
import { seesOccurrence } from "../domain/series.js";
import { findCalendarPosition, listCalendar, findSeries, seriesVersionsSql } from "../db/queries.js";
import { findOccurrence, readMeetingRef } from "./series.js";
import type { MeetingsDeps } from "./deps.js";

const DEFAULT_PAGE_SIZE = 20;

/**
 * GET /v1/meetings: one page of the caller's calendar under a filter,
 * limited to the meetings overlapping [from, to) when given, continuing
 * after `startingAfter` (a meeting's or an occurrence's id). Recurring
 * meetings are listed as their occurrences, expanded over the page's
 * stretch of time only (domain/occurrencePage.ts). The page stops short of `limit` (with
 * hasMore) where more items would not fit one bus message.
 */
export function listMeetings(deps: MeetingsDeps): Handler<typeof meetingsList> {
  return async ({ query }, ctx) => {
    const caller = requireCaller(ctx);
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const window = readWindow(query, caller.timezone);
    const whose = { mode: caller.mode, userId: caller.userId, email: caller.email };
    let after: Position | undefined;
    if (query.startingAfter !== undefined) {
      after = await positionOf(deps, whose, caller, query.startingAfter);
      if (!after) throw new AppError("invalid_request", "Invalid startingAfter: no meeting with this id in your calendar.", { param: "startingAfter" });
    }
    const plan = withWindow(planList(query.filter ?? "upcoming", deps.now()), window);
    const itemBytes = replyBodyBudget(deps.maxMessageBytes());
    const range = { from: plan.endAfter ?? plan.startAfter, to: plan.startBefore ?? plan.startAtOrBefore };
    const singles = await listCalendar(deps.db, { ...whose, plan, ...(after ? { after } : {}), limit, itemBytes }, seriesVersionsSql({ mode: caller.mode, users: [whose], ...range }));
    // No recurring meeting can be on this page: the page is the single meetings' statement, sent as Postgres wrote it.
    if (!singles.beside) return { status: 200, body: new JsonText(singles.answerJson) };
    const kept = await deps.series.readNamed(deps.db, caller.mode, singles.beside);
    const singleItems = singleEntries(singles.itemsJson);
    const last = singleItems[singleItems.length - 1];
    const occurrences = await occurrencesForPage({
      plan,
      series: kept.map((k) => k.series),
      viewer: whose,
      after,
      bound: singles.hasMore && last ? new Date(last.at) : undefined,
      wanted: limit + 1,
      // Every exception of these series is kept with them: each window takes what it needs.
      exceptionsOf: async () => kept.flatMap((k) => k.exceptions),
    });
    const page = mergePage({ direction: plan.direction, singles: singleItems, singlesHaveMore: singles.hasMore, occurrences: occurrences.items, occurrencesExhausted: occurrences.exhausted, limit, itemBytes });
    return { status: 200, body: new JsonText(listAnswer(page.itemsJson, page.hasMore)) };
  };
}

/** Where the item a cursor names sits in list order: a single meeting or an occurrence of the caller's calendar. */
async function positionOf(deps: MeetingsDeps, whose: { mode: Mode; userId: string; email: string }, caller: Caller, id: string): Promise<Position | undefined> {
  const ref = readMeetingRef(id);
  if (ref.kind === "meeting") return findCalendarPosition(deps.db, { ...whose, id });
  if (ref.kind === "none") return undefined;
  const series = await findSeries(deps.db, ref.seriesId, caller.mode);
  if (!series) return undefined;
  const occurrence = await findOccurrence(deps.db, series, ref.originalStart);
  return occurrence && seesOccurrence(series, occurrence, caller) ? { startTime: occurrence.startTime, id: occurrence.id } : undefined;
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
