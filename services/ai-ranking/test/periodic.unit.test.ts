import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { runWhenWoken } from "../src/consumers/periodic.js";

/** How many times `run` was called once `ms` more have passed. */
async function callsAfter(run: { mock: { calls: unknown[] } }, ms: number): Promise<number> {
  await vi.advanceTimersByTimeAsync(ms);
  return run.mock.calls.length;
}

describe("runWhenWoken", () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it("runs once minGapMs after the start, then only every fallbackMs while no one wakes it", async () => {
    const run = vi.fn(async () => {});
    const runs = runWhenWoken(500, 30_000, run, () => {});
    expect([await callsAfter(run, 499), await callsAfter(run, 1), await callsAfter(run, 29_999), await callsAfter(run, 1)]).toEqual([0, 1, 1, 2]);
    await runs.stop();
  });

  it("a burst of wakes is one run, minGapMs after the previous start; a wake during a run brings one more after it", async () => {
    let finish: () => void = () => {};
    const run = vi.fn(() => new Promise<void>((resolve) => (finish = resolve)));
    const runs = runWhenWoken(500, 30_000, run, () => {});
    await vi.advanceTimersByTimeAsync(500);
    finish();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(run).toHaveBeenCalledTimes(1);
    runs.wake();
    runs.wake();
    await vi.advanceTimersByTimeAsync(0);
    expect(run).toHaveBeenCalledTimes(2);
    runs.wake();
    await vi.advanceTimersByTimeAsync(1_000);
    // Never two at once: the wake waits for the run in progress.
    expect(run).toHaveBeenCalledTimes(2);
    finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(run).toHaveBeenCalledTimes(3);
    finish();
    runs.wake();
    await vi.advanceTimersByTimeAsync(499);
    expect(run).toHaveBeenCalledTimes(3);
    await vi.advanceTimersByTimeAsync(1);
    expect(run).toHaveBeenCalledTimes(4);
    finish();
    await runs.stop();
  });

  it("tries a failed run again after minGapMs, reporting the failure", async () => {
    const errors: unknown[] = [];
    const run = vi.fn().mockRejectedValueOnce(new Error("down")).mockResolvedValue(undefined);
    const runs = runWhenWoken(500, 30_000, run, (err) => errors.push(err));
    expect(await callsAfter(run, 500)).toBe(1);
    expect(errors).toHaveLength(1);
    expect(await callsAfter(run, 500)).toBe(2);
    await runs.stop();
  });

  it("once stopped, neither a wake nor the fallback runs it", async () => {
    const run = vi.fn(async () => {});
    const runs = runWhenWoken(500, 30_000, run, () => {});
    await runs.stop();
    runs.wake();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(run).not.toHaveBeenCalled();
  });
});
