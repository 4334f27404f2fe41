import { bind, type EndpointBinding } from "@sched/bus";
import type { Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import { invitesCalendarBusy, type BusyInterval } from "@sched/proto";
import { activeConnections, type ConnectionRecord } from "../db/connections.js";
import { googleFailure } from "../outbound/google.js";
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

const epochSeconds = (iso: string) => Math.floor(Date.parse(iso) / 1_000);

/**
 * Busy time from users' connected calendars (Google's freebusy.query,
 * Microsoft Graph's getSchedule, the events of the chosen CalDAV calendars), cached
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
    const key = `${connection.id}|${(connection.busyCalendars ?? []).join(" ")}|${from}|${to}`;
    const cached = cache.get(key);
    if (cached) return cached;
    if (connection.provider === "caldav") {
      const intervals = await caldavBusy(connection, from, to, signal);
      if (intervals) cache.set(key, intervals);
      return intervals;
    }
    if (connection.provider === "microsoft") {
      const intervals = await microsoftBusy(vault, connection, from, to, signal).catch(async (err: unknown) => {
        const failure = asDeliveryFailure(err);
        if (failure.kind === "revoked") await vault.markBroken(connection, failure.message);
        else logger.warn({ userId: connection.userId, error: failure.message }, "Microsoft free/busy unavailable; going without it");
        return undefined;
      });
      if (intervals) cache.set(key, intervals);
      return intervals;
    }
    // Google counts its primary calendar unless the user chose none.
    if (connection.busyCalendars && !connection.busyCalendars.includes("primary")) return [];
    try {
      const { calendar } = vault.session(connection);
      const res = await calendar.freebusy.query({ requestBody: { timeMin: from, timeMax: to, items: [{ id: "primary" }] } }, { signal });
      const busy = res.data.calendars?.primary?.busy ?? [];
      const intervals: BusyInterval[] = busy.filter((b) => b.start && b.end).map((b) => [epochSeconds(b.start!), epochSeconds(b.end!)]);
      cache.set(key, intervals);
      return intervals;
    } catch (err) {
      const failure = googleFailure(err);
      if (failure.kind === "revoked") await vault.markBroken(connection, failure.message);
      else logger.warn({ userId: connection.userId, error: failure.message }, "Google free/busy unavailable; going without it");
      return undefined;
    }
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
