import type { Stoppable } from "@sched/bus";
import type { Logger } from "@sched/logging";

/**
 * Runs `round` every `everyMs`, the next one planned when one ends (never
 * queued behind a slow one): a round that reads each connection once costs
 * at most one request per connection an interval. Stopping waits for the
 * round under way; `stopped()` lets a round end early.
 */
export function everyInterval(round: (stopped: () => boolean) => Promise<void>, everyMs: number, log: Logger): Stoppable {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const plan = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = round(() => stopped)
        .catch((err: unknown) => log.warn({ err }, "polling round failed"))
        .finally(plan);
    }, everyMs);
    timer.unref();
  };
  plan();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
