import { describe, expect, it } from "vitest";
import { takeBatch } from "../src/domain/requestBatches.js";

describe("request log batches", () => {
  it("when more are waiting than a batch holds, then the oldest go first and the rest wait", () => {
    expect(takeBatch([1, 2, 3, 4, 5], 2)).toEqual({ batch: [1, 2], rest: [3, 4, 5] });
    expect(takeBatch([1], 2)).toEqual({ batch: [1], rest: [] });
  });
});
