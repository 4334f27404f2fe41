import { describe, expect, it } from "vitest";
import { replyBodyBudget, REPLY_HEADROOM_BYTES } from "../src/replyBudget.js";

describe("replyBodyBudget", () => {
  it("leaves room for the headers below the bus's message limit", () => {
    expect(replyBodyBudget(1024 * 1024)).toBe(1024 * 1024 - REPLY_HEADROOM_BYTES);
  });

  it("sets no budget on a bus without a limit, and none below zero on a tiny one", () => {
    expect(replyBodyBudget(undefined)).toBeUndefined();
    expect(replyBodyBudget(1_000)).toBe(0);
  });
});
