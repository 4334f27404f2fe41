import type { Bus } from "@sched/bus";
import { createLogger } from "@sched/logging";
import type { ServedRequest } from "@sched/proto";
import { servedRequest as served } from "@sched/testing";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RequestLogRecorder } from "../src/outbound/requestLog.js";

describe("RequestLogRecorder", () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());
  const logger = createLogger({ name: "test", level: "silent" });
  const settings = { maxBatch: 3, flushEveryMs: 1_000, maxBuffered: 100 };

  it("keeps no timer while nothing waits, and publishes a request flushEveryMs after it came", async () => {
    const published: number[] = [];
    const bus = { publish: vi.fn(async (_def: unknown, payload: { requests: ServedRequest[] }) => void published.push(payload.requests.length)) } as unknown as Bus;
    const recorder = new RequestLogRecorder(bus, logger, settings);
    expect(vi.getTimerCount()).toBe(0);
    recorder.record(served(1));
    recorder.record(served(2));
    await vi.advanceTimersByTimeAsync(999);
    expect(published).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(published).toEqual([2]);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(published).toEqual([2]);
    await recorder.stop();
  });

  it("publishes a full batch at once, and keeps a refused batch for a round flushEveryMs later", async () => {
    const published: number[] = [];
    let refuse = false;
    const bus = {
      publish: vi.fn(async (_def: unknown, payload: { requests: ServedRequest[] }) => {
        if (refuse) throw new Error("no stream");
        published.push(payload.requests.length);
      }),
    } as unknown as Bus;
    const recorder = new RequestLogRecorder(bus, logger, settings);
    for (let n = 1; n <= 3; n++) recorder.record(served(n));
    await vi.advanceTimersByTimeAsync(0);
    expect(published).toEqual([3]);
    refuse = true;
    recorder.record(served(4));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(published).toEqual([3]);
    refuse = false;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(published).toEqual([3, 1]);
    await recorder.stop();
  });
});
