import type { Stoppable } from "@sched/bus";

/**
 * Runs `run` every `everyMs`, never two runs at once; a failed run is
 * reported and the next one comes on time. stop() waits for the run in
 * progress. The timer does not keep the process alive.
 */
export function runEvery(everyMs: number, run: () => Promise<void>, onError: (err: unknown) => void): Stoppable {
  let running = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(run).catch(onError);
  }, everyMs);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
