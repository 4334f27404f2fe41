import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { WEEKDAYS } from "@sched/proto";
import { HEURISTIC_FLOOR } from "../src/domain/fit.js";
import { rankCandidates } from "../src/domain/rank.js";
import { DAY, HOUR, MIN, MONDAY, hourSlots, rankedPerson, weeklyHistory } from "./people.js";

const NOW = MONDAY + 7 * DAY - 3 * DAY;
const TUESDAY_10 = 24 + 10;
const FRIDAY_15 = 4 * 24 + 15;
const THURSDAY_10 = 3 * 24 + 10;

describe("rankCandidates", () => {
  it("puts the weekday and hour people usually meet at first, and says so", () => {
    const ana = rankedPerson("ana", { isCaller: true, name: "Ana", history: weeklyHistory([{ weekday: 1, hour: 10 }], 12) });
    const bo = rankedPerson("bo", { name: "Bo", history: weeklyHistory([{ weekday: 1, hour: 10 }, { weekday: 3, hour: 14 }], 12) });
    const ranked = rankCandidates({ now: NOW, people: [ana, bo], candidates: hourSlots([FRIDAY_15, TUESDAY_10, THURSDAY_10]) });
    expect(ranked.map((s) => s.start)).toEqual(hourSlots([TUESDAY_10, THURSDAY_10, FRIDAY_15]).map((s) => s.start));
    expect(ranked[0]!.reason).toMatch(/^Tuesday mornings are when you and Bo usually meet/);
    expect(ranked[2]!.reason).toMatch(/Fridays at 15:00 are unusual for you and Bo/);
  });

  it("lets stated preferred times outweigh learned habits", () => {
    const ana = rankedPerson("ana", {
      isCaller: true,
      history: weeklyHistory([{ weekday: 1, hour: 10 }], 12),
      preferences: { preferredTimes: [{ start: "15:00", end: "17:00", days: ["friday"] }] },
    });
    const ranked = rankCandidates({ now: NOW, people: [ana], candidates: hourSlots([TUESDAY_10, FRIDAY_15]) });
    expect(ranked[0]!.start).toBe(hourSlots([FRIDAY_15])[0]!.start);
    expect(ranked[0]!.reason).toMatch(/^Inside your stated 15:00–17:00 on Fridays/);
    expect(ranked[1]!.reason).toMatch(/^Outside your stated 15:00–17:00 on Fridays/);
  });

  it("puts avoided days, days past the stated limit and short buffers below the rest", () => {
    const history = weeklyHistory([{ weekday: 1, hour: 10 }, { weekday: 3, hour: 10 }, { weekday: 4, hour: 10 }], 12);
    const slots = hourSlots([TUESDAY_10, THURSDAY_10, 4 * 24 + 10]);
    const weekStart = slots[0]!.start - 10 * HOUR - DAY;
    const avoiding = rankedPerson("a", { isCaller: true, history, preferences: { avoidDays: ["tuesday"] } });
    expect(rankCandidates({ now: NOW, people: [avoiding], candidates: slots }).at(-1)!.start).toBe(slots[0]!.start);

    // Two meetings already on Thursday, a stated maximum of two a day.
    const thursday = weekStart + 3 * DAY;
    const full = rankedPerson("b", {
      isCaller: true,
      name: "B",
      history,
      preferences: { maxMeetingsPerDay: 2 },
      meetings: [{ start: thursday + 14 * HOUR, end: thursday + 15 * HOUR }, { start: thursday + 16 * HOUR, end: thursday + 17 * HOUR }],
    });
    const byLimit = rankCandidates({ now: NOW, people: [full], candidates: slots });
    expect(byLimit.at(-1)!.start).toBe(slots[1]!.start);
    expect(byLimit.at(-1)!.reason).toMatch(/^Puts you past your limit of 2 meetings a day/);

    // A meeting ending five minutes before Friday's slot, 30 minutes wanted.
    const friday = weekStart + 4 * DAY;
    const tight = rankedPerson("c", { isCaller: true, history, preferences: { bufferMinutes: 30 }, meetings: [{ start: friday + 9 * HOUR, end: friday + 9 * HOUR + 55 * MIN }] });
    const byBuffer = rankCandidates({ now: NOW, people: [tight], candidates: slots });
    expect(byBuffer.at(-1)!.start).toBe(slots[2]!.start);
    expect(byBuffer.at(-1)!.reason).toContain("leaves you only 5 of the 30 minutes you want between meetings");
  });

  it("prefers a day that keeps people within their usual load and names it", () => {
    // Bo usually has one meeting a day; on Tuesday he already has one.
    const history = weeklyHistory([{ weekday: 1, hour: 10 }, { weekday: 3, hour: 10 }], 12);
    const slots = hourSlots([TUESDAY_10, THURSDAY_10]);
    const tuesday = slots[0]!.start - 10 * HOUR;
    const bo = rankedPerson("bo", { name: "Bo", history, meetings: [{ start: tuesday + 14 * HOUR, end: tuesday + 15 * HOUR }] });
    const ana = rankedPerson("ana", { isCaller: true, history });
    const ranked = rankCandidates({ now: NOW, people: [ana, bo], candidates: slots });
    expect(ranked[0]!.start).toBe(slots[1]!.start);
    expect(ranked[0]!.reason).toContain("keeps you within your usual 1 meeting that day");
    expect(ranked[1]!.reason).toContain("makes it a busier day than usual for Bo (2 meetings against a usual 1)");
  });

  it("explains honestly when nothing is known", () => {
    const ranked = rankCandidates({ now: NOW, people: [rankedPerson("x", { isCaller: true })], candidates: hourSlots([TUESDAY_10]) });
    expect(ranked[0]!.reason).toMatch(/^No meeting history or stated preferences/);
  });

  it("keeps every score in [0, 1], ordered best first, ties by start, for any people and candidates", () => {
    const personArb = fc.record({
      slots: fc.array(fc.record({ weekday: fc.integer({ min: 0, max: 6 }), hour: fc.integer({ min: 0, max: 23 }) }), { maxLength: 5 }),
      weeks: fc.integer({ min: 0, max: 8 }),
      zone: fc.constantFrom("UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata"),
      avoid: fc.subarray([...WEEKDAYS]),
      buffer: fc.option(fc.integer({ min: 0, max: 240 })),
      max: fc.option(fc.integer({ min: 1, max: 5 })),
      meetingHours: fc.array(fc.integer({ min: 0, max: 14 * 24 }), { maxLength: 10 }),
    });
    fc.assert(
      fc.property(fc.array(personArb, { minLength: 1, maxLength: 4 }), fc.uniqueArray(fc.integer({ min: 0, max: 14 * 24 - 1 }), { maxLength: 30 }), (people, starts) => {
        const ranked = rankCandidates({
          now: NOW,
          people: people.map((p, i) =>
            rankedPerson(`u${i}`, {
              isCaller: i === 0,
              zone: p.zone,
              history: weeklyHistory(p.slots, p.weeks),
              preferences: { avoidDays: p.avoid, bufferMinutes: p.buffer, maxMeetingsPerDay: p.max },
              meetings: p.meetingHours.map((h) => ({ start: MONDAY + 7 * DAY + h * HOUR + 30 * MIN, end: MONDAY + 7 * DAY + h * HOUR + 45 * MIN })),
            }),
          ),
          candidates: starts.map((h) => ({ start: MONDAY + 7 * DAY + h * HOUR, end: MONDAY + 7 * DAY + h * HOUR + 30 * MIN })),
        });
        expect(ranked).toHaveLength(starts.length);
        for (let i = 0; i < ranked.length; i++) {
          expect(ranked[i]!.score).toBeGreaterThanOrEqual(0);
          expect(ranked[i]!.score).toBeLessThanOrEqual(1);
          expect(ranked[i]!.reason.length).toBeGreaterThan(0);
          expect(ranked[i]!.reason.length).toBeLessThanOrEqual(500);
          if (i > 0) {
            const [a, b] = [ranked[i - 1]!, ranked[i]!];
            expect(a.score > b.score || (a.score === b.score && a.start < b.start)).toBe(true);
          }
        }
      }),
      { numRuns: 150 },
    );
  });
});

describe("rankCandidates: cold start, working hours and clustering", () => {
  /** One-hour candidates on weekdays 0–4 at 09:00–16:00 of the ranked week, each with a heuristic score. */
  const week = (score: (i: number) => number, within?: (i: number) => string[]) =>
    Array.from({ length: 40 }, (_, i) => {
      const start = MONDAY + 7 * DAY + Math.floor(i / 8) * DAY + (9 + (i % 8)) * HOUR;
      return { start, end: start + HOUR, heuristicScore: score(i), ...(within ? { withinWorkingHours: within(i) } : {}) };
    });

  it("ranks as the heuristic does when nobody has history or stated preferences", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 40, maxLength: 40 }), fc.integer({ min: 1, max: 4 }), (scores, size) => {
        const people = Array.from({ length: size }, (_, i) => rankedPerson(`u${i}`, { isCaller: i === 0 }));
        const candidates = week((i) => scores[i]! / 1000);
        const ranked = rankCandidates({ now: NOW, people, candidates });
        const heuristic = [...candidates].sort((a, b) => b.heuristicScore - a.heuristicScore || a.start - b.start);
        expect(ranked.map((s) => s.start)).toEqual(heuristic.map((c) => c.start));
        // The heuristic's scores keep their order, in the upper half of the range.
        for (const s of ranked) expect(s.score).toBeCloseTo(HEURISTIC_FLOOR + (1 - HEURISTIC_FLOOR) * candidates.find((c) => c.start === s.start)!.heuristicScore, 9);
        expect(ranked[0]!.reason).toMatch(/^No meeting history or stated preferences to learn from yet; ranked as without AI/);
      }),
      { numRuns: 50 },
    );
  });

  it("with nothing learned, follows stated preferences first and the heuristic after", () => {
    // The heuristic prefers earlier slots, by as much as its scores usually differ; Bo states Thursdays 14:00–16:00.
    const candidates = week((i) => 0.8 - i / 400);
    const ana = rankedPerson("ana", { isCaller: true });
    const bo = rankedPerson("bo", { name: "Bo", preferences: { preferredTimes: [{ start: "14:00", end: "16:00", days: ["thursday"] }] } });
    const ranked = rankCandidates({ now: NOW, people: [ana, bo], candidates });
    const thursday = (h: number) => MONDAY + 7 * DAY + 3 * DAY + h * HOUR;
    expect(ranked.slice(0, 2).map((s) => s.start)).toEqual([thursday(14), thursday(15)]);
    expect(ranked[0]!.reason).toBe("Inside Bo's stated 14:00–16:00 on Thursdays.");
    expect(ranked[2]!.reason).toMatch(/^Outside Bo's stated 14:00–16:00 on Thursdays/);
  });

  it("blends a partly known person toward the heuristic by how much history there is", () => {
    // Tuesday 10:00 habit against a heuristic that prefers Monday 09:00: a long history wins, a single meeting does not.
    const candidates = week((i) => 1 - i / 40);
    const tuesday10 = MONDAY + 8 * DAY + 10 * HOUR;
    const long = rankedPerson("a", { isCaller: true, history: weeklyHistory([{ weekday: 1, hour: 10 }], 15) });
    const short = rankedPerson("b", { isCaller: true, history: weeklyHistory([{ weekday: 1, hour: 10 }], 1) });
    expect(rankCandidates({ now: NOW, people: [long], candidates })[0]!.start).toBe(tuesday10);
    expect(rankCandidates({ now: NOW, people: [short], candidates })[0]!.start).toBe(candidates[0]!.start);
  });

  it("ranks every slot inside everyone's working hours above every slot outside someone's, whatever the fit", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 1000 }), fc.boolean(), fc.boolean()), { minLength: 40, maxLength: 40 }),
        fc.integer({ min: 0, max: 20 }),
        (spec, weeks) => {
          // Bo's history loves the slots outside his hours; the heuristic scores at random.
          const ana = rankedPerson("ana", { isCaller: true });
          const bo = rankedPerson("bo", { name: "Bo", history: weeklyHistory([{ weekday: 0, hour: 9 }, { weekday: 4, hour: 16 }], weeks) });
          const candidates = week(
            (i) => spec[i]![0] / 1000,
            (i) => [...(spec[i]![1] ? ["ana"] : []), ...(spec[i]![2] ? ["bo"] : [])],
          );
          const ranked = rankCandidates({ now: NOW, people: [ana, bo], candidates });
          const withinOf = (s: { start: number }) => candidates.find((c) => c.start === s.start)!.withinWorkingHours ?? [];
          const inside = (s: { start: number }) => withinOf(s).length === 2;
          const firstOutside = ranked.findIndex((s) => !inside(s));
          if (firstOutside >= 0) expect(ranked.slice(firstOutside).some(inside)).toBe(false);
          for (let i = 1; i < ranked.length; i++) expect(ranked[i - 1]!.score).toBeGreaterThanOrEqual(ranked[i]!.score);
          // Three decimals (what askers keep) still tell the tiers apart.
          if (firstOutside > 0) expect(Math.round(ranked[firstOutside - 1]!.score * 1000)).toBeGreaterThan(Math.round(ranked[firstOutside]!.score * 1000));
          for (const s of ranked.filter((s) => !inside(s))) {
            const outside = [...(withinOf(s).includes("ana") ? [] : ["your"]), ...(withinOf(s).includes("bo") ? [] : ["Bo's"])];
            if (ranked.some(inside)) expect(s.reason).toMatch(new RegExp(`^Outside ${outside.join(" and ")} working hours`));
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it("orders by fit alone when no slot lies inside everyone's hours (an evening asked for)", () => {
    const bo = rankedPerson("bo", { isCaller: true, history: weeklyHistory([{ weekday: 4, hour: 16 }], 12) });
    const candidates = week((i) => 1 - i / 40, () => []);
    const ranked = rankCandidates({ now: NOW, people: [bo], candidates });
    expect(ranked[0]!.start).toBe(MONDAY + 11 * DAY + 16 * HOUR);
    expect(ranked.every((s) => s.tier === 0)).toBe(true);
  });

  it("puts a clusterer's meeting next to their others and a spreader's away from them, and says so", () => {
    // Both meet on Tuesdays and Wednesdays, three meetings a day from 09:00: back to back, or an hour apart.
    const history = (gap: number) =>
      [1, 2].flatMap((weekday) => [0, 1, 2].flatMap((i) => weeklyHistory([{ weekday, hour: 9 }], 10).map((m) => ({ ...m, start: m.start + i * (60 + gap) * MIN }))));
    const wednesday = MONDAY + 9 * DAY;
    const today = [{ start: wednesday + 9 * HOUR, end: wednesday + 10 * HOUR }];
    // Wednesday right after the 09:00 meeting, an hour after it, or in the afternoon.
    const slots = [10, 11, 15].map((h) => ({ start: wednesday + h * HOUR, end: wednesday + (h + 1) * HOUR }));
    const clusterer = rankedPerson("c", { isCaller: true, history: history(0), meetings: today });
    const spreader = rankedPerson("s", { isCaller: true, history: history(60), meetings: today });
    const clustered = rankCandidates({ now: NOW, people: [clusterer], candidates: slots });
    expect(clustered[0]!.start).toBe(slots[0]!.start);
    expect(clustered[0]!.reason).toContain("next to other meetings, the way you like them");
    expect(clustered.find((s) => s.start === slots[2]!.start)!.reason).toContain("away from other meetings, though you usually keep them back to back");
    expect(rankCandidates({ now: NOW, people: [spreader], candidates: slots })[0]!.start).toBe(slots[1]!.start);
  });

  it("names avoided days, stated or learned, and the stated hours a slot lies in", () => {
    const monday9 = hourSlots([9]);
    const bo = rankedPerson("bo", { name: "Bo", preferences: { avoidDays: ["monday"] } });
    const cy = rankedPerson("cy", { name: "Cy", history: weeklyHistory([{ weekday: 1, hour: 9 }, { weekday: 2, hour: 9 }, { weekday: 3, hour: 9 }], 10) });
    const ana = rankedPerson("ana", { isCaller: true, name: "Ana", preferences: { avoidDays: ["monday"], preferredTimes: [{ start: "08:00", end: "12:00" }] } });
    expect(rankCandidates({ now: NOW, people: [ana, bo, cy], candidates: monday9 })[0]!.reason).toMatch(/^You and Bo avoid Mondays; Cy never meets on Mondays; inside your stated 08:00–12:00/);
    expect(rankCandidates({ now: NOW, people: [bo, { ...ana, isCaller: false }, { ...cy, isCaller: true }], candidates: monday9 })[0]!.reason).toMatch(
      /^Bo and Ana avoid Mondays; you never meet on Mondays; inside Ana's stated 08:00–12:00/,
    );
  });
});
