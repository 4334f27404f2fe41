import { describe, expect, it } from "vitest";
import { retryPauseMs } from "../src/retryPause.js";
import { BatchNotReady } from "../src/types.js";

describe("retryPauseMs", () => {
  const backoff = [200, 500, 1_000, 2_000, 5_000, 15_000, 30_000];

  it("follows the consumer's back-off, staying on its last step past the end", () => {
    const failed = new Error("database down");
    expect([1, 2, 3, 7, 8, 50].map((attempt) => retryPauseMs(failed, attempt, backoff))).toEqual([200, 500, 1_000, 30_000, 30_000, 30_000]);
    expect(retryPauseMs(failed, 1, [])).toBe(1_000);
  });

  it("looks again within 2 s at a batch waiting for earlier events, however long it has waited", () => {
    const waiting = new BatchNotReady("3 events wait for earlier ones");
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((attempt) => retryPauseMs(waiting, attempt, backoff))).toEqual([200, 500, 1_000, 2_000, 2_000, 2_000, 2_000, 2_000]);
  });
});
