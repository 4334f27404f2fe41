import type { Bus } from "@sched/bus";
import type { Logger } from "@sched/logging";
import { invitesCalendarBusy, meetingsBusy, type CalendarProvider, type Mode } from "@sched/proto";
import { merge, type Interval } from "../domain/intervals.js";
import { SIBLING_TIMEOUT_MS, formatTimestamp } from "../inbound/deps.js";

const SECOND_MS = 1_000;

/**
 * Busy time (confirmed meetings organized or attended, merged) of each user
 * over the span, by user id, in one request: the contract takes the caller
 * and the 100 participants a recommendation may count.
 */
async function busyOf(
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

/** Busy time per user id, and the users whose connected calendars did not answer (their busy time may be missing some). */
export interface BusyAnswer {
  busy: Map<string, Interval[]>;
  incomplete: Set<string>;
  /** The providers of each incomplete user's calendars that did not answer; none known when invites itself did not answer. */
  missing?: Map<string, CalendarProvider[]>;
}

/**
 * Busy time from the users' connected calendars (Google, through invites),
 * by user id. It adds to the answer but never holds it up or fails it: past
 * `timeoutMs`, or when invites cannot answer, the answer goes without it,
 * and every user counts as incomplete (nobody can tell who has a calendar).
 */
async function connectedCalendarBusy(bus: Bus, logger: Logger, mode: Mode, userIds: string[], span: Interval, timeoutMs: number): Promise<BusyAnswer> {
  const busy = new Map<string, Interval[]>();
  try {
    const reply = await bus.request(invitesCalendarBusy, { mode, userIds, ...timestampsOf(span) }, { timeoutMs });
    if (!reply.complete) logger.debug("connected calendar busy time incomplete");
    for (const { userId, intervals } of reply.busy) busy.set(userId, intervals.map(([start, end]) => ({ start: start * SECOND_MS, end: end * SECOND_MS })));
    const incomplete = reply.complete ? [] : (reply.incompleteUserIds ?? userIds);
    const missing = new Map<string, CalendarProvider[]>();
    for (const { userId, provider } of reply.missingCalendars ?? []) missing.set(userId, [...new Set([...(missing.get(userId) ?? []), provider])]);
    return { busy, incomplete: new Set(incomplete), missing };
  } catch (err) {
    logger.warn({ err }, "connected calendar busy time unavailable; going without it");
    return { busy, incomplete: new Set(userIds) };
  }
}

/**
 * Busy time of each user from both sources, merged per user: their meetings
 * (time off included) and their connected calendars, each source asked once
 * for everyone, side by side; the calendars under `calendarTimeoutMs`, and
 * not at all when `askCalendars` is false (known to have none).
 */
export async function busyWithCalendars(
  bus: Bus,
  logger: Logger,
  mode: Mode,
  users: ReadonlyArray<{ id: string; email: string }>,
  span: Interval,
  calendarTimeoutMs: number,
  askCalendars = true,
): Promise<BusyAnswer> {
  const [meetings, calendars] = await Promise.all([
    busyOf(bus, mode, users, span),
    users.length === 0 || !askCalendars ? ({ busy: new Map<string, Interval[]>(), incomplete: new Set<string>() } as BusyAnswer) : connectedCalendarBusy(bus, logger, mode, users.map((u) => u.id), span, calendarTimeoutMs),
  ]);
  for (const [userId, intervals] of calendars.busy) {
    if (intervals.length > 0 && meetings.has(userId)) meetings.set(userId, merge([...meetings.get(userId)!, ...intervals]));
  }
  return { busy: meetings, incomplete: calendars.incomplete, ...(calendars.missing ? { missing: calendars.missing } : {}) };
}
