import type { Bus } from "@sched/bus";
import type { Logger } from "@sched/logging";
import { invitesCalendarBusy, meetingsBusy, type Mode } from "@sched/proto";
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
  const { from, to } = timestampsOf(span);
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

/** Timestamps carry whole seconds: the span widened outward so nothing inside it is cut off. */
function timestampsOf(span: Interval): { from: string; to: string } {
  return { from: formatTimestamp(span.start), to: formatTimestamp(Math.ceil(span.end / SECOND_MS) * SECOND_MS) };
}

/**
 * Busy time from the user's connected calendar (Google, through invites).
 * It adds to the day view but never holds it up or fails it: past
 * `timeoutMs`, or when invites cannot answer, the day goes without it.
 */
export async function connectedCalendarBusy(bus: Bus, logger: Logger, mode: Mode, userId: string, span: Interval, timeoutMs: number): Promise<Interval[]> {
  try {
    const reply = await bus.request(invitesCalendarBusy, { mode, userId, ...timestampsOf(span) }, { timeoutMs });
    if (!reply.complete) logger.debug({ userId }, "connected calendar busy time incomplete");
    return reply.intervals.map(([start, end]) => ({ start: start * SECOND_MS, end: end * SECOND_MS }));
  } catch (err) {
    logger.warn({ err, userId }, "connected calendar busy time unavailable; the day view goes without it");
    return [];
  }
}
