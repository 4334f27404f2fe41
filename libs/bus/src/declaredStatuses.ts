import type { Replies, RouteEndpoint } from "@sched/proto";

/** Each route's declared statuses as a set, made on its first reply: the check on every later one is one lookup. */
const statusesByReplies = new WeakMap<Replies, ReadonlySet<number>>();

/**
 * Whether a route's contract declares `status`. The handler's type already
 * refuses an undeclared one; this holds at run time too, where a cast or an
 * `any` slipped past the compiler.
 */
export function declaresStatus(route: RouteEndpoint, status: number): boolean {
  let statuses = statusesByReplies.get(route.replies);
  if (statuses === undefined) {
    statuses = new Set(Object.keys(route.replies).map(Number));
    statusesByReplies.set(route.replies, statuses);
  }
  return statuses.has(status);
}
