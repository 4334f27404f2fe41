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

export interface WokenRuns extends Stoppable {
  /** Something to do was just committed: a run comes soon, at most one per `minGapMs`. */
  wake(): void;
}

/**
 * Runs `run` when woken, never two runs at once and never two starts closer
 * than `minGapMs`, so a burst of wakes costs one run per gap; with no wake,
 * a run every `fallbackMs` (for work committed by a replica that stopped
 * before its own run). A failed run is reported and tried again after
 * `minGapMs`. An idle process thus wakes once per `fallbackMs`, not once
 * per `minGapMs`. stop() waits for the run in progress. The timers do not
 * keep the process alive.
 */
export function runWhenWoken(minGapMs: number, fallbackMs: number, run: () => Promise<void>, onError: (err: unknown) => void): WokenRuns {
  let stopped = false;
  let running: Promise<void> | undefined;
  let woken = false;
  let lastStart = Date.now();
  let timer: NodeJS.Timeout | undefined;
  let timerAt = Infinity;

  const schedule = (at: number) => {
    if (stopped || (timer && timerAt <= at)) return;
    clearTimeout(timer);
    timerAt = at;
    timer = setTimeout(start, Math.max(0, at - Date.now()));
    timer.unref();
  };
  function start() {
    timer = undefined;
    timerAt = Infinity;
    woken = false;
    lastStart = Date.now();
    let failed = false;
    running = run()
      .catch((err: unknown) => {
        failed = true;
        onError(err);
      })
      .finally(() => {
        running = undefined;
        schedule(woken || failed ? lastStart + minGapMs : Date.now() + fallbackMs);
      });
  }

  schedule(lastStart + minGapMs);
  return {
    wake: () => {
      woken = true;
      if (!running) schedule(lastStart + minGapMs);
    },
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
