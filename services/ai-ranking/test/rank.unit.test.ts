import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { WEEKDAYS } from "@sched/proto";
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

  it("ranks 200 candidates for 10 people in a few milliseconds", () => {
    const people = Array.from({ length: 10 }, (_, i) =>
      rankedPerson(`u${i}`, { isCaller: i === 0, zone: i % 2 ? "Europe/Berlin" : "America/New_York", history: weeklyHistory([{ weekday: i % 5, hour: 9 + (i % 6) }], 20) }),
    );
    const candidates = Array.from({ length: 200 }, (_, i) => ({ start: MONDAY + 7 * DAY + i * HOUR, end: MONDAY + 7 * DAY + i * HOUR + 30 * MIN }));
    rankCandidates({ now: NOW, people, candidates });
    const times: number[] = [];
    for (let run = 0; run < 15; run++) {
      const t = performance.now();
      rankCandidates({ now: NOW, people, candidates });
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    // The target is a 20 ms median (measured by `npm run eval -- ranking`); the margin absorbs a loaded CI machine.
    expect(times[7]!).toBeLessThan(40);
  });
});
