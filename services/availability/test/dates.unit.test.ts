import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { DateTime } from "luxon";
import { WEEKDAYS } from "@sched/proto";
import { parseIsoDate, weekdayOf } from "@sched/time";
import { parseHorizon, resolveDayQuery } from "../src/domain/dates.js";

const utc = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString().replace(".000", "");

/** 2026-03-01T23:30Z: Sunday evening in New York and UTC, already Monday 00:30 in Berlin. */
const SUNDAY_NIGHT = utc("2026-03-01T23:30:00Z");
/** 2026-12-31T23:30Z: Thursday in New York, Friday 2027-01-01 in Berlin. */
const NEW_YEAR = utc("2026-12-31T23:30:00Z");

function day(input: string, zone: string, now: number): string {
  const r = resolveDayQuery(input, zone, now);
  if (!r.ok) throw new Error(`expected ${input} to resolve, got: ${r.message}`);
  return r.value;
}

describe("resolveDayQuery", () => {
  it("accepts a strict ISO date as given", () => {
    expect(day("2026-02-28", "UTC", SUNDAY_NIGHT)).toBe("2026-02-28");
    expect(day("2028-02-29", "UTC", SUNDAY_NIGHT)).toBe("2028-02-29");
  });

  it.each(["2026-02-30", "2026-13-01", "2026-02-29", "2026-00-10", "2026-04-31", "2026-1-05", "20260305", "03/04/2026", "2026/03/05", "24:00", "2026-03-05 24:00"])(
    "refuses %s, naming the date parameter",
    (input) => {
      const r = resolveDayQuery(input, "Europe/Berlin", SUNDAY_NIGHT);
      expect(r).toMatchObject({ ok: false, param: "date" });
    },
  );

  it.each([
    "",
    "   ",
    "someday",
    "next month",
    "tomorrow at 3pm",
    "tomorrow 24:00",
    "now",
    "noon",
    "hello tomorrow",
    "day after tomorrow",
    "march 5 to march 7",
    "february 30",
    "2026-03-05T10:00",
    "constructor",
    "next",
    "in -1 days",
    "in 99999 days",
    "x".repeat(200),
  ])("refuses %j", (input) => {
    expect(resolveDayQuery(input, "Europe/Berlin", SUNDAY_NIGHT)).toMatchObject({ ok: false, param: "date" });
  });

  it("refuses a date outside 1970–9998 however it is written, naming the range", () => {
    const endOf9998 = utc("9998-12-31T00:00:00Z");
    for (const [input, now] of [["december 31 9999", SUNDAY_NIGHT], ["tomorrow", endOf9998], ["in 2 days", endOf9998], ["next monday", endOf9998], ["5 march 1969", SUNDAY_NIGHT], ["9999-12-31", SUNDAY_NIGHT]] as const) {
      expect(resolveDayQuery(input, "Pacific/Kiritimati", now), input).toEqual({ ok: false, param: "date", message: "date must be a date from 1970-01-01 to 9998-12-31" });
    }
    expect(day("today", "Pacific/Kiritimati", endOf9998)).toBe("9998-12-31");
    expect(day("december 31 9998", "UTC", SUNDAY_NIGHT)).toBe("9998-12-31");
    expect(day("1970-01-01", "Pacific/Kiritimati", SUNDAY_NIGHT)).toBe("1970-01-01");
  });

  it("reads today, tomorrow and yesterday in the user's zone, not UTC", () => {
    expect(day("today", "Europe/Berlin", SUNDAY_NIGHT)).toBe("2026-03-02");
    expect(day("today", "America/New_York", SUNDAY_NIGHT)).toBe("2026-03-01");
    expect(day("today", "UTC", SUNDAY_NIGHT)).toBe("2026-03-01");
    expect(day("tomorrow", "Europe/Berlin", SUNDAY_NIGHT)).toBe("2026-03-03");
    expect(day("yesterday", "Europe/Berlin", SUNDAY_NIGHT)).toBe("2026-03-01");
    expect(day("yesterday", "America/New_York", SUNDAY_NIGHT)).toBe("2026-02-28");
  });

  it("is case-insensitive and ignores surrounding and repeated blanks", () => {
    expect(day("  TODAY ", "Europe/Berlin", SUNDAY_NIGHT)).toBe("2026-03-02");
    expect(day(" Next   Monday ", "Europe/Berlin", SUNDAY_NIGHT)).toBe("2026-03-09");
  });

  it("reads a bare weekday and this <weekday> as the first such day on or after today", () => {
    // Berlin: today is Monday 2026-03-02.
    expect(day("monday", "Europe/Berlin", SUNDAY_NIGHT)).toBe("2026-03-02");
    expect(day("this monday", "Europe/Berlin", SUNDAY_NIGHT)).toBe("2026-03-02");
    expect(day("sunday", "Europe/Berlin", SUNDAY_NIGHT)).toBe("2026-03-08");
    expect(day("friday", "Europe/Berlin", SUNDAY_NIGHT)).toBe("2026-03-06");
    // New York: today is Sunday 2026-03-01, the end of the ISO week.
    expect(day("sunday", "America/New_York", SUNDAY_NIGHT)).toBe("2026-03-01");
    expect(day("monday", "America/New_York", SUNDAY_NIGHT)).toBe("2026-03-02");
    expect(day("this saturday", "America/New_York", SUNDAY_NIGHT)).toBe("2026-03-07");
  });

  it("reads next <weekday> as the first such day strictly after today", () => {
    expect(day("next monday", "Europe/Berlin", SUNDAY_NIGHT)).toBe("2026-03-09");
    expect(day("next tuesday", "Europe/Berlin", SUNDAY_NIGHT)).toBe("2026-03-03");
    expect(day("next sunday", "America/New_York", SUNDAY_NIGHT)).toBe("2026-03-08");
    expect(day("next monday", "America/New_York", SUNDAY_NIGHT)).toBe("2026-03-02");
  });

  it("accepts abbreviated weekdays", () => {
    expect(day("fri", "Europe/Berlin", SUNDAY_NIGHT)).toBe("2026-03-06");
    expect(day("next thurs", "Europe/Berlin", SUNDAY_NIGHT)).toBe("2026-03-05");
    expect(day("this tues", "Europe/Berlin", SUNDAY_NIGHT)).toBe("2026-03-03");
  });

  it("crosses the year boundary on the user's clock", () => {
    expect(day("today", "Europe/Berlin", NEW_YEAR)).toBe("2027-01-01");
    expect(day("today", "America/New_York", NEW_YEAR)).toBe("2026-12-31");
    expect(day("tomorrow", "America/New_York", NEW_YEAR)).toBe("2027-01-01");
    expect(day("yesterday", "Europe/Berlin", NEW_YEAR)).toBe("2026-12-31");
    expect(day("next thursday", "America/New_York", NEW_YEAR)).toBe("2027-01-07");
    expect(day("thursday", "Europe/Berlin", NEW_YEAR)).toBe("2027-01-07");
    expect(day("in 3 days", "America/New_York", NEW_YEAR)).toBe("2027-01-03");
    expect(day("in 1 day", "Pacific/Kiritimati", NEW_YEAR)).toBe("2027-01-02");
  });

  it("reads in N days, including a leap day", () => {
    expect(day("in 0 days", "Europe/Berlin", SUNDAY_NIGHT)).toBe("2026-03-02");
    expect(day("in 3 days", "Europe/Berlin", SUNDAY_NIGHT)).toBe("2026-03-05");
    expect(day("tomorrow", "UTC", utc("2028-02-28T12:00:00Z"))).toBe("2028-02-29");
  });

  it("takes what chrono-node reads as one whole date, on the user's calendar", () => {
    expect(day("March 5", "Europe/Berlin", SUNDAY_NIGHT)).toBe("2026-03-05");
    expect(day("5 March 2027", "Europe/Berlin", SUNDAY_NIGHT)).toBe("2027-03-05");
    expect(day("the day after tomorrow", "Europe/Berlin", SUNDAY_NIGHT)).toBe("2026-03-04");
    expect(day("the day after tomorrow", "America/New_York", SUNDAY_NIGHT)).toBe("2026-03-03");
    expect(day("in 2 weeks", "Europe/Berlin", SUNDAY_NIGHT)).toBe("2026-03-16");
    expect(day("last friday", "Europe/Berlin", SUNDAY_NIGHT)).toBe("2026-02-27");
  });

  it("agrees with luxon for today and in N days in any zone (property)", () => {
    const zones = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata", "Pacific/Kiritimati", "Pacific/Pago_Pago"];
    fc.assert(
      fc.property(fc.constantFrom(...zones), fc.integer({ min: utc("2020-01-01T00:00:00Z"), max: utc("2035-01-01T00:00:00Z") }), fc.integer({ min: 0, max: 400 }), (zone, now, n) => {
        const local = DateTime.fromMillis(now, { zone });
        expect(day("today", zone, now)).toBe(local.toISODate());
        expect(day(`in ${n} days`, zone, now)).toBe(local.plus({ days: n }).toISODate());
      }),
      { numRuns: 200 },
    );
  });

  it("finds weekdays within the promised week (property)", () => {
    fc.assert(
      fc.property(fc.constantFrom(...WEEKDAYS), fc.constantFrom("", "this ", "next "), fc.integer({ min: utc("2020-01-01T00:00:00Z"), max: utc("2035-01-01T00:00:00Z") }), (weekday, prefix, now) => {
        const zone = "Australia/Lord_Howe";
        const today = DateTime.fromMillis(now, { zone }).startOf("day");
        const result = day(`${prefix}${weekday}`, zone, now);
        const ahead = Math.round(DateTime.fromISO(result, { zone }).diff(today, "days").days);
        expect(weekdayOf(result)).toBe(weekday);
        if (prefix === "next ") expect(ahead).toBeGreaterThanOrEqual(1);
        else expect(ahead).toBeGreaterThanOrEqual(0);
        expect(ahead).toBeLessThanOrEqual(prefix === "next " ? 7 : 6);
      }),
      { numRuns: 200 },
    );
  });

  it("never returns an impossible date (property)", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 20 }), (input) => {
        const r = resolveDayQuery(input, "Europe/Berlin", SUNDAY_NIGHT);
        if (r.ok) expect(parseIsoDate(r.value)).not.toBeNull();
      }),
      { numRuns: 300 },
    );
  });
});

describe("parseHorizon", () => {
  const NOW = utc("2026-03-04T10:17:23Z");

  function horizon(input: { from?: string; to?: string }, zone = "Europe/Berlin", now = NOW) {
    const r = parseHorizon(input, zone, now);
    if (!r.ok) throw new Error(`expected a horizon, got: ${r.param} ${r.message}`);
    return { start: iso(r.value.start), end: iso(r.value.end) };
  }

  it("defaults to now until seven days later", () => {
    expect(horizon({})).toEqual({ start: "2026-03-04T10:17:23Z", end: "2026-03-11T10:17:23Z" });
  });

  it("keeps the wall-clock time when the default week crosses a clock change", () => {
    // 2026-03-25 12:00 CET + 7 local days = 2026-04-01 12:00 CEST: 167 real hours.
    expect(horizon({}, "Europe/Berlin", utc("2026-03-25T11:00:00Z"))).toEqual({ start: "2026-03-25T11:00:00Z", end: "2026-04-01T10:00:00Z" });
  });

  it("reads bare dates in the user's zone; a bare to includes its whole day", () => {
    expect(horizon({ from: "2026-03-05", to: "2026-03-06" })).toEqual({ start: "2026-03-04T23:00:00Z", end: "2026-03-06T23:00:00Z" });
    expect(horizon({ from: "2026-03-05", to: "2026-03-05" }, "Asia/Kolkata")).toEqual({ start: "2026-03-04T18:30:00Z", end: "2026-03-05T18:30:00Z" });
  });

  it("reads naive datetimes in the user's zone and honours explicit offsets", () => {
    expect(horizon({ from: "2026-03-05T09:30", to: "2026-03-05T18:00:00" })).toEqual({ start: "2026-03-05T08:30:00Z", end: "2026-03-05T17:00:00Z" });
    expect(horizon({ from: "2026-03-05T09:30:00Z", to: "2026-03-05T18:00:00.5+05:30" })).toEqual({ start: "2026-03-05T09:30:00Z", end: "2026-03-05T12:30:00.500Z" });
  });

  it("reaches past the last supported date without leaving four-digit years, in the zones furthest from UTC", () => {
    expect(horizon({ from: "9998-12-01", to: "9998-12-31" }, "Etc/GMT+12")).toEqual({ start: "9998-12-01T12:00:00Z", end: "9999-01-01T12:00:00Z" });
    expect(horizon({ from: "9998-12-31T23:59:59-14:00" }, "Pacific/Kiritimati")).toEqual({ start: "9999-01-01T13:59:59Z", end: "9999-01-08T13:59:59Z" });
    expect(horizon({ from: "1970-01-01", to: "1970-01-01" }, "Pacific/Kiritimati")).toEqual({ start: "1970-01-01T10:40:00Z", end: "1970-01-02T10:40:00Z" });
  });

  it("defaults to to seven days after an explicit from", () => {
    expect(horizon({ from: "2026-03-05" })).toEqual({ start: "2026-03-04T23:00:00Z", end: "2026-03-11T23:00:00Z" });
  });

  it("allows 31 local days even when a clock change makes them 31 days and an hour", () => {
    expect(horizon({ from: "2026-10-01", to: "2026-10-31" })).toEqual({ start: "2026-09-30T22:00:00Z", end: "2026-10-31T23:00:00Z" });
    expect(horizon({ from: "2026-03-01T00:00", to: "2026-04-01T00:00" })).toEqual({ start: "2026-02-28T23:00:00Z", end: "2026-03-31T22:00:00Z" });
  });

  it.each([
    [{ from: "2026-10-01", to: "2026-11-01" }, "to"],
    [{ from: "2026-03-01T00:00", to: "2026-04-01T00:01" }, "to"],
    [{ from: "2026-03-05", to: "2026-03-04" }, "to"],
    [{ from: "2026-03-05T10:00", to: "2026-03-05T10:00" }, "to"],
    [{ to: "2026-03-01" }, "to"],
    [{ from: "2026-02-30" }, "from"],
    [{ from: "2026-03-05T24:00" }, "from"],
    [{ from: "2026-03-05T09:60" }, "from"],
    [{ from: "2026-03-05 09:30" }, "from"],
    [{ from: "tomorrow" }, "from"],
    [{ from: "2026-03-05T09:30+15:00" }, "from"],
    [{ to: "2026-13-01" }, "to"],
    [{ to: "" }, "to"],
  ] as const)("refuses %j naming %s", (input, param) => {
    expect(parseHorizon(input, "Europe/Berlin", NOW)).toMatchObject({ ok: false, param });
  });
});
