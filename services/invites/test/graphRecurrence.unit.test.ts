import { describe, expect, it } from "vitest";
import { graphRecurrenceOf } from "../src/domain/graphRecurrence.js";

// 13 October 2026 is a Tuesday; 09:00 in Berlin is 07:00 UTC.
const START = "2026-10-13T07:00:00Z";
const BERLIN = "Europe/Berlin";
const map = (rule: string, start = START, zone = BERLIN) => graphRecurrenceOf(rule, start, zone);

describe("a series' rule as Microsoft Graph's patternedRecurrence", () => {
  it("weekly on given days, a count of occurrences from the first start's local date", () => {
    expect(map("FREQ=WEEKLY;BYDAY=TU,TH;COUNT=10")).toEqual({
      ok: true,
      recurrence: {
        pattern: { type: "weekly", interval: 1, daysOfWeek: ["tuesday", "thursday"], firstDayOfWeek: "monday" },
        range: { type: "numbered", startDate: "2026-10-13", numberOfOccurrences: 10, recurrenceTimeZone: BERLIN },
      },
    });
  });

  it("weekly without BYDAY on the first start's weekday in the series' zone, every other week from Sunday-started weeks", () => {
    // 23:30 UTC on Monday is already Tuesday in Berlin.
    expect(map("FREQ=WEEKLY;INTERVAL=2;WKST=SU", "2026-10-12T22:30:00Z")).toEqual({
      ok: true,
      recurrence: {
        pattern: { type: "weekly", interval: 2, daysOfWeek: ["tuesday"], firstDayOfWeek: "sunday" },
        range: { type: "noEnd", startDate: "2026-10-13", recurrenceTimeZone: BERLIN },
      },
    });
  });

  it("daily, and daily on weekdays as Graph's weekly rule", () => {
    expect(map("FREQ=DAILY;INTERVAL=3;COUNT=5")).toMatchObject({ ok: true, recurrence: { pattern: { type: "daily", interval: 3 } } });
    expect(map("FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR")).toMatchObject({ ok: true, recurrence: { pattern: { type: "weekly", interval: 1, daysOfWeek: ["monday", "tuesday", "wednesday", "thursday", "friday"] } } });
    expect(map("FREQ=DAILY;INTERVAL=2;BYDAY=MO")).toEqual({ ok: false, reason: "Graph has no daily rule on some weekdays every few days" });
  });

  it("monthly on a day of the month, or on a week's weekday (ordinal or BYSETPOS), the last included", () => {
    expect(map("FREQ=MONTHLY;BYMONTHDAY=15")).toMatchObject({ ok: true, recurrence: { pattern: { type: "absoluteMonthly", interval: 1, dayOfMonth: 15 } } });
    expect(map("FREQ=MONTHLY")).toMatchObject({ ok: true, recurrence: { pattern: { type: "absoluteMonthly", dayOfMonth: 13 } } });
    expect(map("FREQ=MONTHLY;BYDAY=2TU")).toMatchObject({ ok: true, recurrence: { pattern: { type: "relativeMonthly", daysOfWeek: ["tuesday"], index: "second" } } });
    expect(map("FREQ=MONTHLY;BYDAY=-1FR")).toMatchObject({ ok: true, recurrence: { pattern: { type: "relativeMonthly", daysOfWeek: ["friday"], index: "last" } } });
    expect(map("FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1")).toMatchObject({
      ok: true,
      recurrence: { pattern: { type: "relativeMonthly", daysOfWeek: ["monday", "tuesday", "wednesday", "thursday", "friday"], index: "last" } },
    });
  });

  it("yearly on a date, or on a weekday of a week of a month", () => {
    expect(map("FREQ=YEARLY")).toMatchObject({ ok: true, recurrence: { pattern: { type: "absoluteYearly", month: 10, dayOfMonth: 13 } } });
    expect(map("FREQ=YEARLY;BYMONTH=11;BYDAY=4TH")).toMatchObject({ ok: true, recurrence: { pattern: { type: "relativeYearly", month: 11, daysOfWeek: ["thursday"], index: "fourth" } } });
  });

  it("ends on the local date of UNTIL in the series' zone", () => {
    // 23:30 UTC on 31 December is 1 January in Berlin.
    expect(map("FREQ=WEEKLY;UNTIL=20261231T233000Z")).toMatchObject({ ok: true, recurrence: { range: { type: "endDate", startDate: "2026-10-13", endDate: "2027-01-01" } } });
  });

  it("refuses, with the reason, what Graph cannot say", () => {
    expect(map("FREQ=MONTHLY;BYMONTHDAY=-1")).toEqual({ ok: false, reason: "Graph has no month day counted from the month's end" });
    expect(map("FREQ=MONTHLY;BYMONTHDAY=1,15")).toEqual({ ok: false, reason: "Graph repeats on one day of the month only" });
    expect(map("FREQ=MONTHLY;BYDAY=5TU")).toEqual({ ok: false, reason: "Graph has no week 5 of the month (first to fourth, or last)" });
    expect(map("FREQ=MONTHLY;BYDAY=-2TU")).toEqual({ ok: false, reason: "Graph has no week -2 of the month (first to fourth, or last)" });
    expect(map("FREQ=MONTHLY;BYDAY=2MO,3TU")).toEqual({ ok: false, reason: "Graph has one week of the month for all the rule's days" });
    expect(map("FREQ=MONTHLY;BYDAY=MO")).toEqual({ ok: false, reason: "Graph has no rule on every such weekday of the month" });
    expect(map("FREQ=YEARLY;BYMONTH=1,7")).toEqual({ ok: false, reason: "Graph repeats in one month of the year only" });
    expect(map("FREQ=HOURLY")).toEqual({ ok: false, reason: "Graph has no FREQ=HOURLY" });
    expect(map("FREQ=WEEKLY", START, "Mars/Olympus")).toEqual({ ok: false, reason: "unknown time zone Mars/Olympus" });
  });
});
