import type { Bus } from "@sched/bus";
import { meetingsBusy, type Mode } from "@sched/proto";
import type { Interval } from "../domain/intervals.js";
import { SIBLING_TIMEOUT_MS, formatTimestamp } from "./deps.js";

const SECOND_MS = 1_000;

/**
 * Busy time (confirmed meetings organized or attended, merged) of each user
 * over the span, by user id, in one request: the contract takes the caller
 * and the 100 participants a recommendation may count.
 */
export async function busyOf(
  bus: Bus,
  mode: Mode,
  users: ReadonlyArray<{ id: string; email: string }>,
  span: Interval,
): Promise<Map<string, Interval[]>> {
  const byUser = new Map<string, Interval[]>(users.map((u) => [u.id, []]));
  if (users.length === 0) return byUser;
  // Timestamps carry whole seconds: widen the span outward so nothing inside it is cut off.
  const from = formatTimestamp(span.start);
  const to = formatTimestamp(Math.ceil(span.end / SECOND_MS) * SECOND_MS);
  const reply = await bus.request(
    meetingsBusy,
    { mode, users: users.map((u) => ({ userId: u.id, email: u.email })), from, to },
    { timeoutMs: SIBLING_TIMEOUT_MS },
  );
  for (const { userId, intervals } of reply.busy) {
    const list = byUser.get(userId);
    if (list) for (const [start, end] of intervals) list.push({ start: start * SECOND_MS, end: end * SECOND_MS });
  }
  return byUser;
}
