import { DateTime } from "luxon";
import { describe, expect, it } from "vitest";
import { originalStarts, ruleOfGraphRecurrence } from "../src/graphRecurrenceExpansion.js";

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
const berlin = DateTime.fromISO("2026-10-20T09:00:00", { zone: "Europe/Berlin" });

describe("the fake Graph's expansion of a patterned recurrence", () => {
  it("says Graph's shapes as RFC 5545 rules and refuses what Graph would", () => {
    expect(ruleOfGraphRecurrence({ pattern: { type: "weekly", interval: 2, daysOfWeek: ["tuesday", "thursday"], firstDayOfWeek: "monday" }, range: { type: "numbered", startDate: "2026-10-20", numberOfOccurrences: 6 } })).toBe(
      "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH;WKST=MO;COUNT=6",
    );
    expect(ruleOfGraphRecurrence({ pattern: { type: "relativeMonthly", interval: 1, daysOfWeek: ["friday"], index: "last" }, range: { type: "endDate", startDate: "2026-10-30", endDate: "2027-03-31" } })).toBe(
      "FREQ=MONTHLY;INTERVAL=1;BYDAY=FR;BYSETPOS=-1;UNTIL=20270331T235959",
    );
    expect(ruleOfGraphRecurrence({ pattern: { type: "weekly", interval: 1 }, range: { type: "noEnd", startDate: "2026-10-20" } })).toBeUndefined();
    expect(ruleOfGraphRecurrence({ pattern: { type: "hourly", interval: 1 }, range: { type: "noEnd", startDate: "2026-10-20" } })).toBeUndefined();
    expect(ruleOfGraphRecurrence({ pattern: { type: "daily", interval: 1 }, range: { type: "numbered", startDate: "2026-10-20", numberOfOccurrences: 0 } })).toBeUndefined();
  });

  it("keeps the local start time in the recurrence's zone across a daylight-saving change", () => {
    const starts = originalStarts({ pattern: { type: "weekly", interval: 1, daysOfWeek: ["tuesday"] }, range: { type: "numbered", startDate: "2026-10-20", numberOfOccurrences: 3, recurrenceTimeZone: "Europe/Berlin" } }, berlin, Infinity);
    // Summer time ends on 2026-10-25: 09:00 Berlin is 07:00 UTC before, 08:00 UTC after.
    expect(starts.map(iso)).toEqual(["2026-10-20T07:00:00Z", "2026-10-27T08:00:00Z", "2026-11-03T08:00:00Z"]);
  });

  it("ends an end-dated range on its last local date, and stops a series without end where asked", () => {
    const until = originalStarts({ pattern: { type: "daily", interval: 1 }, range: { type: "endDate", startDate: "2026-10-20", endDate: "2026-10-22", recurrenceTimeZone: "Europe/Berlin" } }, berlin, Infinity);
    expect(until.map(iso)).toEqual(["2026-10-20T07:00:00Z", "2026-10-21T07:00:00Z", "2026-10-22T07:00:00Z"]);
    const open = originalStarts({ pattern: { type: "absoluteMonthly", interval: 1, dayOfMonth: 20 }, range: { type: "noEnd", startDate: "2026-10-20", recurrenceTimeZone: "Europe/Berlin" } }, berlin, Date.parse("2027-01-01T00:00:00Z"));
    expect(open.map(iso)).toEqual(["2026-10-20T07:00:00Z", "2026-11-20T08:00:00Z", "2026-12-20T08:00:00Z"]);
  });
});
