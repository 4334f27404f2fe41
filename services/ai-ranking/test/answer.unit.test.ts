import { describe, expect, it } from "vitest";
import { applyModelRanking, InvalidModelAnswer } from "../src/outbound/llm/answer.js";
import { summarize } from "../src/outbound/llm/summary.js";
import { rankCandidates } from "../src/domain/rank.js";
import { DAY, MONDAY, hourSlots, rankedPerson, weeklyHistory } from "./people.js";

const people = [
  rankedPerson("ana", { isCaller: true, name: "Ana", history: weeklyHistory([{ weekday: 1, hour: 10 }], 10), preferences: { avoidDays: ["friday"] } }),
  rankedPerson("bo", { name: "Bo", history: weeklyHistory([{ weekday: 1, hour: 10 }], 10) }),
];
const ranked = rankCandidates({ now: MONDAY + 4 * DAY, people, candidates: hourSlots([34, 58, 82, 106, 110]) });

describe("applyModelRanking", () => {
  it("orders the shown slots as the model says, above every slot it was not shown, with names for labels", () => {
    const result = applyModelRanking(ranked, 3, { ranking: [{ slot: "S3", score: 0.9, reason: "P2 likes it; P1 too; P9 is nobody." }, { slot: "S1", score: 0.2, reason: "fine" }] }, people);
    expect(result.map((s) => s.start)).toEqual([ranked[2]!.start, ranked[0]!.start, ranked[1]!.start, ranked[3]!.start, ranked[4]!.start]);
    expect(result[0]!.reason).toBe("Bo likes it; you too; P9 is nobody.");
    // The slot the model left out keeps its own reason, below the ones it ranked.
    expect(result[2]!.reason).toBe(ranked[1]!.reason);
    for (let i = 1; i < result.length; i++) expect(result[i - 1]!.score).toBeGreaterThanOrEqual(result[i]!.score);
    expect(result[2]!.score).toBeGreaterThanOrEqual(ranked[3]!.score);
    for (const s of result) expect(s.score >= 0 && s.score <= 1).toBe(true);
  });

  it("refuses slots it was not shown and slots named twice", () => {
    expect(() => applyModelRanking(ranked, 3, { ranking: [{ slot: "S4", score: 1, reason: "x" }] }, people)).toThrow(InvalidModelAnswer);
    expect(() => applyModelRanking(ranked, 3, { ranking: [{ slot: "S1", score: 1, reason: "x" }, { slot: "S1", score: 0.5, reason: "y" }] }, people)).toThrow(InvalidModelAnswer);
  });
});

describe("summarize", () => {
  it("labels people, gives each slot on each person's clock, and carries stated preferences", () => {
    const summary = summarize(ranked.slice(0, 2), people);
    expect(summary.people.map((p) => p.label)).toEqual(["P1", "P2"]);
    expect(summary.people[0]!.stated.avoidDays).toEqual(["friday"]);
    expect(summary.people[1]!.learned.usualHours[0]).toBe("Tuesday 10:00 (10 meetings)");
    expect(summary.slots.map((s) => s.id)).toEqual(["S1", "S2"]);
    expect(summary.slots[0]!.perPerson.P1!.local).toBe("Tuesday 10:00-11:00");
    expect(JSON.stringify(summary)).not.toMatch(/Ana|Bo\b|ana|bo\b/);
  });
});
