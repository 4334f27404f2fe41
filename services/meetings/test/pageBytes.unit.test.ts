import { describe, expect, it } from "vitest";
import { pageItemBudget, REPLY_HEADROOM_BYTES } from "../src/domain/pageBytes.js";

describe("pageItemBudget", () => {
  it("leaves room for the envelope and headers below the bus's message limit", () => {
    expect(pageItemBudget(1024 * 1024)).toBe(1024 * 1024 - REPLY_HEADROOM_BYTES);
  });

  it("sets no budget on a bus without a limit, and none below zero on a tiny one", () => {
    expect(pageItemBudget(undefined)).toBeUndefined();
    expect(pageItemBudget(1_000)).toBe(0);
  });
});
