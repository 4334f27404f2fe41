import { describe, expect, it } from "vitest";
import { retryDelayMs, worthRetrying } from "../domain/retry.js";

describe("the client's retries", () => {
  it("retries what decided nothing and nothing else", () => {
    for (const answer of ["timeout", "connection", 409, 429, 500, 502, 503] as const) expect(worthRetrying(answer)).toBe(true);
    for (const answer of [200, 201, 400, 401, 403, 404, 422]) expect(worthRetrying(answer)).toBe(false);
  });

  it("waits what Retry-After asks, else a back-off doubling from 200 ms up to 2 s", () => {
    expect(retryDelayMs("3", 1)).toBe(3_000);
    expect(retryDelayMs("0", 4)).toBe(0);
    expect([1, 2, 3, 4, 5, 9].map((tries) => retryDelayMs(undefined, tries))).toEqual([200, 400, 800, 1_600, 2_000, 2_000]);
    expect(retryDelayMs("Wed, 21 Oct 2026 07:28:00 GMT", 2)).toBe(400);
  });
});
