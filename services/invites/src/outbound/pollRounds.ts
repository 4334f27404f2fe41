import type { Stoppable } from "@sched/bus";
import type { Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import { claimPollTurns, type ProviderEvent, providerEventsByConnection, watchedConnections } from "../db/queries.js";

/** Rounds run on a schedule, and sooner when asked. */
export interface PollRounds extends Stoppable {
  /** Runs a round now, or right after the one under way (which may have read too early). */
  wake(): void;
}

/**
 * Runs `round` every `everyMs`, the next one planned when one ends (never
 * queued behind a slow one): a round that reads each connection once costs
 * at most one request per connection an interval. Stopping waits for the
 * round under way; `stopped()` lets a round end early.
 */
export function everyInterval(round: (stopped: () => boolean) => Promise<void>, everyMs: number, log: Logger): PollRounds {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let busy = false;
  let wakeAfter = false;
  const run = () => {
    busy = true;
    running = round(() => stopped)
      .catch((err: unknown) => log.warn({ err }, "polling round failed"))
      .finally(() => {
        busy = false;
        if (wakeAfter) {
          wakeAfter = false;
          plan(0);
        } else plan(everyMs);
      });
  };
  const plan = (delayMs: number) => {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(run, delayMs);
    timer.unref();
  };
  plan(everyMs);
  return {
    wake: () => {
      if (busy) wakeAfter = true;
      else plan(0);
    },
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

/** How often a provider's connections are read: `everyMs`, or `watchedEveryMs` while a push channel tells of changes. */
export interface AnswerPollSettings {
  everyMs: number;
  /** Absent: `everyMs`. */
  watchedEveryMs?: number;
}

/**
 * The rounds that read answers back from one provider's calendars: each
 * connection with events of ours, once an interval, by one replica (its
 * turn taken in invites' schema); a connection whose push channel is live
 * is read at the longer interval, and whenever a notification makes it due
 * (answersDueNow, then wake).
 */
export function answerPollRounds(
  db: Knex,
  provider: "google" | "microsoft",
  settings: AnswerPollSettings,
  log: Logger,
  readConnection: (connectionId: string, events: ProviderEvent[]) => Promise<void>,
): PollRounds {
  const name = provider === "google" ? "Google" : "Microsoft";
  return everyInterval(
    async (stopped) => {
      const due = await providerEventsByConnection(db, provider);
      const ids = due.map((d) => d.connectionId);
      const watched = await watchedConnections(db, ids);
      const mine = new Set([
        ...(await claimPollTurns(db, ids.filter((id) => !watched.has(id)), settings.everyMs)),
        ...(await claimPollTurns(db, ids.filter((id) => watched.has(id)), settings.watchedEveryMs ?? settings.everyMs)),
      ]);
      for (const { connectionId, events } of due) {
        if (stopped()) return;
        if (!mine.has(connectionId)) continue;
        await readConnection(connectionId, events).catch((err: unknown) => log.warn({ connectionId, error: err instanceof Error ? err.message : String(err) }, `could not read answers from a ${name} calendar; trying next time`));
      }
    },
    settings.everyMs,
    log,
  );
}
