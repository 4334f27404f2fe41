import type { Bus } from "@sched/bus";
import { meetingsBusy, type Mode } from "@sched/proto";
import type { Interval } from "../domain/intervals.js";
import { SIBLING_TIMEOUT_MS, formatTimestamp, parseTimestamp } from "./deps.js";

/** Users one meetings.v1.busy request may name (its contract's bound). */
const MAX_USERS_PER_REQUEST = 100;

/**
 * Busy time (confirmed meetings organized or attended) of each user over the
 * span, by user id. One request for up to 100 users; a recommendation can
 * count 101 people (the caller and 100 participants), and only then does the
 * question take a second request, sent at the same time.
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
  const to = formatTimestamp(Math.ceil(span.end / 1_000) * 1_000);
  const batches: Array<ReadonlyArray<{ id: string; email: string }>> = [];
  for (let i = 0; i < users.length; i += MAX_USERS_PER_REQUEST) batches.push(users.slice(i, i + MAX_USERS_PER_REQUEST));
  const replies = await Promise.all(
    batches.map((batch) =>
      bus.request(meetingsBusy, { mode, users: batch.map((u) => ({ userId: u.id, email: u.email })), from, to }, { timeoutMs: SIBLING_TIMEOUT_MS }),
    ),
  );
  for (const reply of replies) {
    for (const { userId, intervals } of reply.busy) {
      const list = byUser.get(userId);
      if (list) for (const i of intervals) list.push({ start: parseTimestamp(i.start), end: parseTimestamp(i.end) });
    }
  }
  return byUser;
}
