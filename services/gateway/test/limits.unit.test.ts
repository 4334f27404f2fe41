import { describe, expect, it } from "vitest";
import { limitFor } from "../src/domain/limits.js";

const defaults = { standardPerMinute: 100, aiPerMinute: 10 };

describe("the limit that applies to a key", () => {
  it("is the deployment's when the key has none of its own", () => {
    expect(limitFor("standard", {}, defaults)).toBe(100);
    expect(limitFor("ai", {}, defaults)).toBe(10);
    expect(limitFor("ai", { rateLimits: { standardPerMinute: null, aiPerMinute: null } }, defaults)).toBe(10);
  });

  it("is the key's own, per bucket, where it has one", () => {
    const caller = { rateLimits: { standardPerMinute: 5_000, aiPerMinute: null } };
    expect(limitFor("standard", caller, defaults)).toBe(5_000);
    expect(limitFor("ai", caller, defaults)).toBe(10);
    expect(limitFor("ai", { rateLimits: { standardPerMinute: null, aiPerMinute: 3 } }, defaults)).toBe(3);
  });

  it("may be lower than the deployment's, as for a key under suspicion", () => {
    expect(limitFor("standard", { rateLimits: { standardPerMinute: 1, aiPerMinute: 1 } }, defaults)).toBe(1);
  });
});
