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
    (plan.startAtOrBefore === undefined || start <= plan.startAtOrBefore.getTime())
  );
}

/** List order: by start time, ties by id, both in the plan's direction. */
export function compareForList(direction: Direction, a: { startTime: Date; id: string }, b: { startTime: Date; id: string }): number {
  const byStart = a.startTime.getTime() - b.startTime.getTime();
  const ascending = byStart !== 0 ? byStart : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  return direction === "asc" ? ascending : -ascending;
}
