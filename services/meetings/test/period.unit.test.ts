import fc from "fast-check";
import { DateTime } from "luxon";
import { describe, expect, it } from "vitest";
import { readBound, readPeriod } from "../src/domain/period.js";
import { formatTimestamp } from "../src/domain/timing.js";

const names = { start: "start", end: "end" };
const period = (start: string, end: string, zone: string, maxDays = 366) => {
  const r = readPeriod({ start, end }, zone, names, maxDays);
  return r.ok ? [formatTimestamp(r.start), formatTimestamp(r.end)] : `refused ${r.param}: ${r.problem}`;
};

describe("readPeriod", () => {
  it("reads whole days on the user's clock, the end day included", () => {
    expect(period("2026-05-04", "2026-05-04", "Europe/Berlin")).toEqual(["2026-05-03T22:00:00Z", "2026-05-04T22:00:00Z"]);
    expect(period("2026-05-04", "2026-05-06", "America/New_York")).toEqual(["2026-05-04T04:00:00Z", "2026-05-07T04:00:00Z"]);
  });

  it("gives a spring-forward day 23 hours and a fall-back day 25", () => {
    expect(period("2026-03-29", "2026-03-29", "Europe/Berlin")).toEqual(["2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z"]);
    expect(period("2026-10-25", "2026-10-25", "Europe/Berlin")).toEqual(["2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z"]);
  });

  it("starts a day whose midnight is skipped where its clock jumps to", () => {
    // Santiago moves from 00:00 to 01:00 on 2026-09-06.
    expect(period("2026-09-06", "2026-09-06", "America/Santiago")).toEqual(["2026-09-06T04:00:00Z", "2026-09-07T03:00:00Z"]);
  });

  it("reads hours with or without an offset", () => {
    expect(period("2026-05-04T13:00", "2026-05-04T17:30", "Europe/Berlin")).toEqual(["2026-05-04T11:00:00Z", "2026-05-04T15:30:00Z"]);
    expect(period("2026-05-04T13:00:00Z", "2026-05-04", "Europe/Berlin")).toEqual(["2026-05-04T13:00:00Z", "2026-05-04T22:00:00Z"]);
  });

  it("refuses, naming the field, what does not exist, an end not after the start and a period too long", () => {
    expect(period("2026-02-30", "2026-03-01", "UTC")).toBe("refused start: is not a date that exists");
    expect(period("2026-03-01", "2026-13-01", "UTC")).toBe("refused end: is not a date that exists");
    expect(period("2026-03-29T02:30", "2026-03-29T05:00", "Europe/Berlin")).toMatch(/^refused start: does not exist in time zone/);
    expect(period("2026-05-04T10:00Z", "2026-05-04T10:00Z", "UTC")).toBe("refused end: must be after start");
    expect(period("2026-05-05", "2026-05-04", "UTC")).toBe("refused end: must be after start");
    expect(period("2026-01-01", "2027-01-02", "UTC")).toBe("refused end: may be at most 366 days after start");
    expect(period("2026-01-01", "2026-12-31", "UTC")).toEqual(["2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z"]);
  });

  it("covers exactly the local days named, in any zone, daylight-saving days included", () => {
    const zones = ["Europe/Berlin", "America/New_York", "Australia/Sydney", "Asia/Kolkata", "America/Santiago", "Pacific/Chatham", "UTC"];
    fc.assert(
      fc.property(fc.constantFrom(...zones), fc.date({ min: new Date("2000-01-01"), max: new Date("2040-12-31"), noInvalidDate: true }), fc.integer({ min: 0, max: 40 }), (zone, date, days) => {
        const first = date.toISOString().slice(0, 10);
        const last = DateTime.fromISO(first).plus({ days }).toISODate()!;
        const r = readPeriod({ start: first, end: last }, zone, names, 366);
        if (!r.ok) return false;
        // The start is a local day's first instant and the instant before the end is on the last day.
        const startLocal = DateTime.fromJSDate(r.start, { zone });
        const beforeEnd = DateTime.fromJSDate(new Date(r.end.getTime() - 1), { zone });
        const atEnd = DateTime.fromJSDate(r.end, { zone });
        return (
          startLocal.toISODate() === first &&
          DateTime.fromJSDate(new Date(r.start.getTime() - 1), { zone }).toISODate() !== first &&
          beforeEnd.toISODate() === last &&
          atEnd.toISODate() !== last
        );
      }),
      { numRuns: 500 },
    );
  });

  it("reads a date bound as the day's start, or the next day's when it ends a period", () => {
    const start = readBound("2026-03-29", "Europe/Berlin", "start");
    const end = readBound("2026-03-29", "Europe/Berlin", "end");
    expect(start.ok && formatTimestamp(start.value)).toBe("2026-03-28T23:00:00Z");
    expect(end.ok && formatTimestamp(end.value)).toBe("2026-03-29T22:00:00Z");
  });
});
