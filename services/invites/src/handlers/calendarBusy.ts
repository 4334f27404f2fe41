import { bind, type EndpointBinding } from "@sched/bus";
import type { Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import { invitesCalendarBusy, type BusyInterval } from "@sched/proto";
import { activeConnection } from "../db/connections.js";
import { googleFailure } from "../delivery/google.js";
import type { ConnectionVault } from "../delivery/vault.js";
import { ExpiringCache } from "../domain/expiringCache.js";

export interface CalendarBusySettings {
  /** How long Google may take; past it the answer is "incomplete" rather than late. */
  timeoutMs: number;
  /** How long an answer is reused: a day view reloaded in a loop asks Google once. */
  cacheMs: number;
}

const epochSeconds = (iso: string) => Math.floor(Date.parse(iso) / 1_000);

/**
 * Busy time from the user's connected Google calendar (freebusy.query),
 * cached briefly and bounded by a deadline, so a slow or failing provider
 * costs the day view at most `timeoutMs` and never an error. Test mode
 * never calls Google.
 */
export function calendarBusyBindings(db: Knex, vault: ConnectionVault, logger: Logger, settings: CalendarBusySettings): EndpointBinding[] {
  const cache = new ExpiringCache<BusyInterval[]>(settings.cacheMs, 5_000);
  return [
    bind(invitesCalendarBusy, async ({ mode, userId, from, to }) => {
      if (mode === "test") return { intervals: [], complete: true };
      const connection = await activeConnection(db, userId);
      if (!connection) return { intervals: [], complete: true };
      const key = `${connection.id}|${from}|${to}`;
      const cached = cache.get(key);
      if (cached) return { intervals: cached, complete: true };
      const { calendar } = vault.session(connection);
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), settings.timeoutMs);
      try {
        const res = await calendar.freebusy.query({ requestBody: { timeMin: from, timeMax: to, items: [{ id: "primary" }] } }, { signal: controller.signal });
        const busy = res.data.calendars?.primary?.busy ?? [];
        const intervals: BusyInterval[] = busy.filter((b) => b.start && b.end).map((b) => [epochSeconds(b.start!), epochSeconds(b.end!)]);
        cache.set(key, intervals);
        return { intervals, complete: true };
      } catch (err) {
        const failure = googleFailure(err);
        if (failure.kind === "revoked") await vault.markBroken(connection, failure.message);
        else logger.warn({ userId, error: failure.message }, "Google free/busy unavailable; the day view goes without it");
        return { intervals: [], complete: false };
      } finally {
        clearTimeout(timer);
      }
    }),
  ];
}
