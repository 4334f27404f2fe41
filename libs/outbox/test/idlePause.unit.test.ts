import { describe, expect, it } from "vitest";
import { idlePause } from "../src/relay.js";

describe("idlePause", () => {
  it("waits pollMs after a batch that found rows or a wake, then doubles per empty poll up to idlePollMs", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 100].map((n) => idlePause(1_000, 8_000, n))).toEqual([1_000, 1_000, 2_000, 4_000, 8_000, 8_000, 8_000, 8_000]);
  });

  it("keeps pollMs when idlePollMs is pollMs", () => {
    expect([0, 1, 5, 1_000].map((n) => idlePause(50, 50, n))).toEqual([50, 50, 50, 50]);
  });
});
