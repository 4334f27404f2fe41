import { bind, type EndpointBinding } from "@sched/bus";
import type { Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import { invitesCalendarBusy, type BusyInterval } from "@sched/proto";
import { activeConnections, type ConnectionRecord } from "../db/queries.js";
import { googleBusy } from "../outbound/googleBusy.js";
import { microsoftBusy } from "../outbound/microsoftBusy.js";
import type { ConnectionVault } from "../outbound/vault.js";
import { clipToSpan, coveringHours } from "../domain/busySpan.js";
import { ExpiringCache } from "../domain/expiringCache.js";
import { asDeliveryFailure } from "../domain/retry.js";

export interface CalendarBusySettings {
  /** How long Google may take; past it the answer is "incomplete" rather than late. */
  timeoutMs: number;
  /** How long an answer is reused: a day view reloaded in a loop asks Google once. */
  cacheMs: number;
}

/**
 * Busy time from users' connected calendars, each connection's chosen ones
 * (Google's freebusy.query; Microsoft Graph's getSchedule and calendar
 * views; the events of CalDAV calendars), cached
 * briefly and bounded by one deadline for all, so a slow or failing
 * provider costs the caller at most `timeoutMs` and never an error. Test
 * mode never calls Google.
 */
export function calendarBusyBindings(db: Knex, vault: ConnectionVault, logger: Logger, settings: CalendarBusySettings): EndpointBinding[] {
  const cache = new ExpiringCache<BusyInterval[]>(settings.cacheMs, 5_000);

  const caldavBusy = async (connection: ConnectionRecord, from: string, to: string, signal: AbortSignal): Promise<BusyInterval[] | undefined> => {
    try {
      const account = await vault.caldav(connection, settings.timeoutMs, signal);
      return await account.busy(connection.busyCalendars, from, to, signal);
    } catch (err) {
      logger.warn({ userId: connection.userId, error: err instanceof Error ? err.message : String(err) }, "CalDAV busy time unavailable; going without it");
      return undefined;
    }
  };

  const busyOf = async (connection: ConnectionRecord, from: string, to: string, signal: AbortSignal): Promise<BusyInterval[] | undefined> => {
    const key = `${connection.id}|${JSON.stringify(connection.busyCalendars)}|${from}|${to}`;
    const cached = cache.get(key);
    if (cached) return cached;
    if (connection.provider === "caldav") {
      const intervals = await caldavBusy(connection, from, to, signal);
      if (intervals) cache.set(key, intervals);
      return intervals;
    }
    const read = connection.provider === "microsoft" ? microsoftBusy : googleBusy;
    const intervals = await read(vault, connection, from, to, signal).catch(async (err: unknown) => {
      const failure = asDeliveryFailure(err);
      if (failure.kind === "revoked") await vault.markBroken(connection, failure.message);
      else logger.warn({ userId: connection.userId, provider: connection.provider, error: failure.message }, "free/busy unavailable; going without it");
      return undefined;
    });
    if (intervals) cache.set(key, intervals);
    return intervals;
  };

  return [
    bind(invitesCalendarBusy, async ({ mode, userIds, from, to }) => {
      if (mode === "test") return { busy: [], complete: true };
      const connections = await activeConnections(db, userIds);
      if (connections.length === 0) return { busy: [], complete: true };
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), settings.timeoutMs);
      try {
        const asked = coveringHours(from, to);
        const answers = await Promise.all(connections.map((c) => busyOf(c, asked.from, asked.to, controller.signal)));
        return {
          busy: byUser(connections.map((c, i) => ({ userId: c.userId, intervals: clipToSpan(answers[i] ?? [], from, to) }))),
          complete: answers.every((a) => a !== undefined),
          incompleteUserIds: [...new Set(connections.filter((_, i) => answers[i] === undefined).map((c) => c.userId))],
          missingCalendars: connections.filter((_, i) => answers[i] === undefined).map((c) => ({ userId: c.userId, provider: c.provider })),
        };
      } finally {
        clearTimeout(timer);
      }
    }),
  ];
}

/** One entry per user, however many calendars they connected, in start order. */
function byUser(answers: { userId: string; intervals: BusyInterval[] }[]): { userId: string; intervals: BusyInterval[] }[] {
  const merged = new Map<string, BusyInterval[]>();
  for (const { userId, intervals } of answers) merged.set(userId, [...(merged.get(userId) ?? []), ...intervals]);
  return [...merged].map(([userId, intervals]) => ({ userId, intervals: intervals.sort((a, b) => a[0] - b[0]) }));
}
