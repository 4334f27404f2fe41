import { describe, expect, it } from "vitest";
import { newId, randomBase62 } from "../src/ids.js";

describe("randomBase62", () => {
  it("makes strings of the length asked, of base62 characters only, longer ones than any before included", () => {
    for (const length of [0, 1, 16, 24, 32, 100, 24]) expect(randomBase62(length)).toMatch(new RegExp(`^[0-9A-Za-z]{${length}}$`));
  });

  it("draws every character of the alphabet about equally often", () => {
    const counts = new Map<string, number>();
    // 62,000 characters across many pool refills: each of the 62 expected 1,000 times (σ ≈ 31).
    for (let i = 0; i < 2_000; i++) for (const c of randomBase62(31)) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(62);
    for (const n of counts.values()) expect(Math.abs(n - 1_000)).toBeLessThan(200);
  });

  it("does not repeat itself", () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => newId("req")));
    expect(ids.size).toBe(10_000);
    for (const id of ids) expect(id).toMatch(/^req_[0-9A-Za-z]{24}$/);
  });
});
