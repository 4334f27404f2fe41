import type { MeetingFilter, MeetingStatus } from "@sched/proto";
import { endTimeOf, LONGEST_MEETING_MS, SHORTEST_MEETING_MS } from "./timing.js";
import type { MeetingRecord } from "./meeting.js";

export type Direction = "asc" | "desc";

/**
 * What a list filter selects and in which order, as conditions a query can
 * put on an index of (status, start_time, id). The end-time conditions are
 * exact; the start-time bounds follow from them (every meeting lasts 15 to
 * 120 minutes) and only narrow the index range.
 */
export interface ListPlan {
  status?: MeetingStatus;
  direction: Direction;
  /** end_time > endAfter */
  endAfter?: Date;
  /** end_time <= endAtOrBefore */
  endAtOrBefore?: Date;
  /** start_time > startAfter */
  startAfter?: Date;
  /** start_time <= startAtOrBefore */
  startAtOrBefore?: Date;
  /** start_time < startBefore */
  startBefore?: Date;
}

/** A window of time a list is limited to: meetings overlapping [from, to); either side may be open. */
export interface ListWindow {
  from?: Date | undefined;
  to?: Date | undefined;
}

const later = (a: Date | undefined, b: Date): Date => (a && a.getTime() >= b.getTime() ? a : b);

/**
 * The plan limited to meetings overlapping the window (end after `from`,
 * start before `to`), still as bounds on the same index: a meeting that ends
 * after `from` starts after `from` minus the longest duration, which bounds
 * the start-time range from below as `to` bounds it from above.
 */
export function withWindow(plan: ListPlan, window: ListWindow): ListPlan {
  const out: ListPlan = { ...plan };
  if (window.from) {
    out.endAfter = later(plan.endAfter, window.from);
    out.startAfter = later(plan.startAfter, new Date(window.from.getTime() - LONGEST_MEETING_MS));
  }
  if (window.to) out.startBefore = plan.startBefore && plan.startBefore.getTime() <= window.to.getTime() ? plan.startBefore : window.to;
  return out;
}

export function planList(filter: MeetingFilter, now: Date): ListPlan {
  switch (filter) {
    case "upcoming":
      return { status: "confirmed", direction: "asc", endAfter: now, startAfter: new Date(now.getTime() - LONGEST_MEETING_MS) };
    case "past":
      return { status: "confirmed", direction: "desc", endAtOrBefore: now, startAtOrBefore: new Date(now.getTime() - SHORTEST_MEETING_MS) };
    case "draft":
      return { status: "draft", direction: "asc" };
    case "all":
      return { direction: "desc" };
  }
}

/** The plan's selection as a predicate (the specification the query must match). */
export function matchesPlan(plan: ListPlan, meeting: Pick<MeetingRecord, "status" | "startTime" | "duration">): boolean {
  const end = endTimeOf(meeting.startTime, meeting.duration).getTime();
  const start = meeting.startTime.getTime();
  return (
    (plan.status === undefined || meeting.status === plan.status) &&
    (plan.endAfter === undefined || end > plan.endAfter.getTime()) &&
    (plan.endAtOrBefore === undefined || end <= plan.endAtOrBefore.getTime()) &&
    (plan.startAfter === undefined || start > plan.startAfter.getTime()) &&
    (plan.startAtOrBefore === undefined || start <= plan.startAtOrBefore.getTime()) &&
    (plan.startBefore === undefined || start < plan.startBefore.getTime())
  );
}

/** List order: by start time, ties by id, both in the plan's direction. */
export function compareForList(direction: Direction, a: { startTime: Date; id: string }, b: { startTime: Date; id: string }): number {
  const byStart = a.startTime.getTime() - b.startTime.getTime();
  const ascending = byStart !== 0 ? byStart : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  return direction === "asc" ? ascending : -ascending;
}
