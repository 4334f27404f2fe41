import { describe, expect, it } from "vitest";
import { learnPatterns } from "../src/domain/patterns.js";
import { DAY, HOUR, MIN, MONDAY, weeklyHistory } from "./people.js";

describe("learnPatterns", () => {
  it("knows nothing from no history", () => {
    const p = learnPatterns([], "UTC");
    expect(p.meetings).toBe(0);
    expect(p.hourly.every((n) => n === 0)).toBe(true);
    expect(p.dailyLoad).toEqual({ usual: 0, busy: 0 });
    expect(p.usualGapMinutes).toBeNull();
    expect(p.usualLeadDays).toBeNull();
  });

  it("counts meetings by weekday and hour on the person's own clock", () => {
    // Tuesdays 09:00 UTC are 10:00 in Berlin in winter.
    const history = weeklyHistory([{ weekday: 1, hour: 9 }], 4);
    expect(learnPatterns(history, "UTC").hourly[1 * 24 + 9]).toBe(4);
    const berlin = learnPatterns(history, "Europe/Berlin");
    expect(berlin.hourly[1 * 24 + 10]).toBe(4);
    expect(berlin.hourly[1 * 24 + 9]).toBe(0);
    // Late Monday evening in New York is Tuesday 01:00 UTC.
    const late = learnPatterns(weeklyHistory([{ weekday: 1, hour: 1 }], 2), "America/New_York");
    expect(late.hourly[0 * 24 + 20]).toBe(2);
  });

  it("learns the usual and busy daily load, gaps, lead time and the usual length", () => {
    const day = MONDAY - 7 * DAY;
    const history = [
      // A day of three: 09:00–10:00, 10:20–11:20, 12:00–12:30 (gaps 20 and 40 minutes).
      { start: day + 9 * HOUR, durationMinutes: 60, scheduledAt: day - 2 * DAY },
      { start: day + 10 * HOUR + 20 * MIN, durationMinutes: 60, scheduledAt: day - 2 * DAY },
      { start: day + 12 * HOUR, durationMinutes: 30, scheduledAt: day - 4 * DAY },
      // Two days of one, one of them scheduled after it started (never a negative lead).
      { start: day + DAY + 9 * HOUR, durationMinutes: 60, scheduledAt: day },
      { start: day + 2 * DAY + 9 * HOUR, durationMinutes: 60, scheduledAt: day + 3 * DAY },
    ];
    const p = learnPatterns(history, "UTC");
    expect(p.meetings).toBe(5);
    expect(p.dailyLoad).toEqual({ usual: 1, busy: 3 });
    expect(p.usualGapMinutes).toBe(20);
    expect(p.usualLeadDays).toBe(2);
    expect(p.usualDurationMinutes).toBe(60);
  });
});

describe("learnPatterns: clustering and avoided weekdays", () => {
  /** `weeks` weeks of days holding `perDay` one-hour meetings from 09:00 on the given weekdays, `gapMinutes` apart. */
  function days(weekdays: readonly number[], perDay: number, gapMinutes: number, weeks = 8) {
    const history = [];
    for (let w = 1; w <= weeks; w++) {
      for (const d of weekdays) {
        const day = MONDAY - w * 7 * DAY + d * DAY;
        for (let i = 0; i < perDay; i++) history.push({ start: day + 9 * HOUR + i * (60 + gapMinutes) * MIN, durationMinutes: 60, scheduledAt: day - 2 * DAY });
      }
    }
    return history;
  }

  it("tells people who put meetings back to back from those who leave room or hold one a day", () => {
    expect(learnPatterns(days([1, 3], 3, 0), "UTC").clustering).toBe(1);
    expect(learnPatterns(days([1, 3], 3, 5), "UTC").clustering).toBe(1);
    expect(learnPatterns(days([1, 3], 3, 30), "UTC").clustering).toBe(0);
    expect(learnPatterns(days([0, 1, 2, 3, 4], 1, 0), "UTC").clustering).toBe(0);
    // Too little history to say.
    expect(learnPatterns(days([1], 3, 0, 2), "UTC").clustering).toBeNull();
  });

  it("learns a working weekday never met on over weeks of meeting on the others, and none from a short history", () => {
    expect(learnPatterns(days([1, 2, 3, 4], 1, 0), "UTC").avoidedWeekdays).toEqual([0]);
    expect(learnPatterns(days([0, 1, 2, 3, 4], 1, 0), "UTC").avoidedWeekdays).toEqual([]);
    expect(learnPatterns(days([1, 2, 3, 4], 2, 0, 3), "UTC").avoidedWeekdays).toEqual([]);
    // Meeting on two weekdays only is a sparse calendar, not three avoided days.
    expect(learnPatterns(days([1, 3], 1, 0, 12), "UTC").avoidedWeekdays).toEqual([]);
  });
});
