import type { RecommendationBody, RecommendedSlot } from "@sched/proto";
import { describe, expect, it } from "vitest";
import { fitRecommendation } from "../src/domain/replySize.js";

const people = Array.from({ length: 101 }, (_, i) => `${"p".repeat(240)}${i}@example.com`);
const slot = (i: number): RecommendedSlot => ({
  start: `2031-01-${String(1 + (i % 28)).padStart(2, "0")}T09:00:00Z`,
  end: `2031-01-${String(1 + (i % 28)).padStart(2, "0")}T09:30:00Z`,
  score: 1 - i / 100,
  reason: "Everyone is inside working hours.",
  withinWorkingHours: people,
});
const body = (n: number): RecommendationBody => ({ slots: Array.from({ length: n }, (_, i) => slot(i)), consideredParticipants: people.slice(1), consideredOptionalParticipants: [], rankedBy: "heuristic" });
const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

describe("fitRecommendation", () => {
  it("keeps the best slots whose answer fits the budget, exactly as many as fit", () => {
    const full = body(50);
    expect(bytes(full)).toBeGreaterThan(1024 * 1024);
    const budget = 1024 * 1024 - 16 * 1024;
    const fitted = fitRecommendation(full, budget);
    expect(bytes(fitted)).toBeLessThanOrEqual(budget);
    expect(fitted.slots).toEqual(full.slots.slice(0, fitted.slots.length));
    expect(bytes({ ...full, slots: full.slots.slice(0, fitted.slots.length + 1) })).toBeGreaterThan(budget);
    expect(fitted.consideredParticipants).toEqual(full.consideredParticipants);
  });

  it("leaves an answer that fits, or a bus without a limit, as it is, and always one slot", () => {
    const small = body(3);
    expect(fitRecommendation(small, 1024 * 1024)).toBe(small);
    expect(fitRecommendation(body(50), undefined).slots).toHaveLength(50);
    expect(fitRecommendation(body(5), 10).slots).toHaveLength(1);
    expect(fitRecommendation(body(0), 10).slots).toEqual([]);
  });
});
