import { DateTime } from "luxon";
import { describe, expect, it } from "vitest";
import { checkRule, occurrenceId, occurrenceStarts, readOccurrenceId, type SeriesRule } from "../src/domain/recurrence.js";

const at = (iso: string) => new Date(iso);
const local = (d: Date, zone: string) => DateTime.fromJSDate(d, { zone }).toFormat("yyyy-MM-dd HH:mm ZZ");

function series(rule: string, startLocal: string, zone: string): SeriesRule {
  const start = DateTime.fromISO(startLocal, { zone }).toJSDate();
  const checked = checkRule(rule, start, zone);
  if (!checked.ok) throw new Error(checked.problem);
  return { rule: checked.rule, timeZone: zone, start };
}

describe("checkRule", () => {
  const start = at("2026-03-02T08:00:00Z"); // Monday 09:00 Berlin
  it.each([
    ["FREQ=WEEKLY", "must end"],
    ["FREQ=HOURLY;COUNT=3", "FREQ must be one of"],
    ["FREQ=WEEKLY;COUNT=2;UNTIL=20270101T000000Z", "both COUNT and UNTIL"],
    ["FREQ=WEEKLY;COUNT=731", "COUNT must be"],
    ["FREQ=DAILY;UNTIL=20330101T000000Z", "more than 730"],
    ["FREQ=YEARLY;UNTIL=20330101T000000Z", "longer than 5 years"],
    ["FREQ=WEEKLY;BYHOUR=9;COUNT=2", "not supported: BYHOUR"],
    ["FREQ=WEEKLY;COUNT=2;COUNT=3", "COUNT twice"],
    ["FREQ=WEEKLY;BYDAY=XX;COUNT=2", "BYDAY must be weekdays"],
    ["FREQ=WEEKLY;BYDAY=-1FR;COUNT=2", "needs FREQ=MONTHLY or YEARLY"],
    ["FREQ=MONTHLY;BYMONTHDAY=32;COUNT=2", "BYMONTHDAY must be"],
    ["FREQ=MONTHLY;BYMONTH=13;COUNT=2", "BYMONTH must be"],
    ["FREQ=MONTHLY;BYSETPOS=1;COUNT=2", "BYSETPOS needs"],
    ["FREQ=WEEKLY;BYDAY=TU;COUNT=2", "first occurrence"],
    ["FREQ=WEEKLY;UNTIL=20260101", "UNTIL is before startTime"],
    ["FREQ=WEEKLY;INTERVAL=0;COUNT=2", "INTERVAL must be"],
    ["FREQ", "without a value"],
    ["", "is empty"],
  ])("refuses %j (%s)", (rule, problem) => {
    const result = checkRule(rule, start, "Europe/Berlin");
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problem).toContain(problem);
  });

  it("counts the months a monthly rule skips: 37 times on the 31st runs past five years", () => {
    // Only seven months a year have a 31st: the 37th is in 2033, more than five years after 2027-12-31.
    const onThe31st = at("2027-12-30T23:00:00Z"); // 2027-12-31 00:00 Berlin
    const refused = checkRule("FREQ=MONTHLY;COUNT=37", onThe31st, "Europe/Berlin");
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.problem).toContain("longer than 5 years");
    expect(checkRule("FREQ=MONTHLY;COUNT=37", at("2027-12-14T23:00:00Z"), "Europe/Berlin").ok).toBe(true);
  });

  it("normalizes: parts in order, upper case, no RRULE:, no INTERVAL=1, UNTIL as a UTC instant", () => {
    const result = checkRule("RRULE:byday=mo,we;interval=1;freq=weekly;until=20260401", start, "Europe/Berlin");
    expect(result).toEqual({ ok: true, rule: "FREQ=WEEKLY;UNTIL=20260401T215959Z;BYDAY=MO,WE", occurrences: 10, lastStart: at("2026-04-01T07:00:00Z") });
  });

  it("accepts 730 daily occurrences", () => {
    expect(checkRule("FREQ=DAILY;COUNT=730", start, "Europe/Berlin")).toMatchObject({ ok: true, occurrences: 730 });
  });
});

describe("occurrence ids", () => {
  it("name the series and the original start in UTC, and read back", () => {
    const id = occurrenceId("mtg_abc", at("2026-03-29T07:00:00Z"));
    expect(id).toBe("mtg_abc_20260329T070000Z");
    expect(readOccurrenceId(id)).toEqual({ seriesId: "mtg_abc", originalStart: at("2026-03-29T07:00:00Z") });
    expect(readOccurrenceId("mtg_abc")).toBeUndefined();
    expect(readOccurrenceId("mtg_abc_20260230T070000Z")).toBeUndefined();
    expect(readOccurrenceId("mtg_abc_00000101T000000Z")).toBeUndefined();
  });
});

describe("expansion keeps the organizer's wall clock", () => {
  it("weekly 09:00 Europe/Berlin stays 09:00 across both changes", () => {
    const s = series("FREQ=WEEKLY;COUNT=40", "2026-03-16T09:00", "Europe/Berlin");
    const starts = occurrenceStarts(s, at("2026-03-01T00:00:00Z"), at("2026-12-01T00:00:00Z"));
    expect(starts).toHaveLength(38);
    expect(starts.map((d) => local(d, "Europe/Berlin").slice(11, 16))).toEqual(Array(38).fill("09:00"));
    expect(starts.slice(1, 3).map((d) => d.toISOString())).toEqual(["2026-03-23T08:00:00.000Z", "2026-03-30T07:00:00.000Z"]);
    const october = starts.filter((d) => d.getUTCMonth() === 9 || d.getUTCMonth() === 10).map((d) => d.toISOString());
    expect(october).toContain("2026-10-19T07:00:00.000Z");
    expect(october).toContain("2026-10-26T08:00:00.000Z");
  });

  it("a participant in America/New_York sees the weeks when the offset differs: three in spring, one in autumn", () => {
    const s = series("FREQ=WEEKLY;BYDAY=MO;UNTIL=20261231T230000Z", "2026-01-05T09:00", "Europe/Berlin");
    const starts = occurrenceStarts(s, at("2026-01-01T00:00:00Z"), at("2027-01-01T00:00:00Z"));
    const newYork = starts.map((d) => DateTime.fromJSDate(d, { zone: "America/New_York" }).toFormat("HH:mm"));
    const odd = starts.filter((_, i) => newYork[i] === "04:00").map((d) => d.toISOString().slice(0, 10));
    // The US changes on 8 March and 1 November, Europe on 29 March and 25 October.
    expect(odd).toEqual(["2026-03-09", "2026-03-16", "2026-03-23", "2026-10-26"]);
    expect(new Set(newYork)).toEqual(new Set(["03:00", "04:00"]));
  });

  it("monthly on the 31st skips the months without one", () => {
    const s = series("FREQ=MONTHLY;BYMONTHDAY=31;COUNT=7", "2026-01-31T09:00", "Europe/Berlin");
    const starts = occurrenceStarts(s, at("2026-01-01T00:00:00Z"), at("2028-01-01T00:00:00Z"));
    expect(starts.map((d) => local(d, "Europe/Berlin"))).toEqual([
      "2026-01-31 09:00 +01:00",
      "2026-03-31 09:00 +02:00",
      "2026-05-31 09:00 +02:00",
      "2026-07-31 09:00 +02:00",
      "2026-08-31 09:00 +02:00",
      "2026-10-31 09:00 +01:00",
      "2026-12-31 09:00 +01:00",
    ]);
  });

  it("the last Friday of the month (BYSETPOS=-1)", () => {
    const s = series("FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;COUNT=4", "2026-01-30T16:30", "America/New_York");
    const starts = occurrenceStarts(s, at("2026-01-01T00:00:00Z"), at("2027-01-01T00:00:00Z"));
    expect(starts.map((d) => local(d, "America/New_York"))).toEqual([
      "2026-01-30 16:30 -05:00",
      "2026-02-27 16:30 -05:00",
      "2026-03-31 16:30 -04:00",
      "2026-04-30 16:30 -04:00",
    ]);
    const fridays = series("FREQ=MONTHLY;BYDAY=FR;BYSETPOS=-1;COUNT=3", "2026-01-30T16:30", "America/New_York");
    expect(occurrenceStarts(fridays, at("2026-01-01T00:00:00Z"), at("2027-01-01T00:00:00Z")).map((d) => local(d, "America/New_York"))).toEqual([
      "2026-01-30 16:30 -05:00",
      "2026-02-27 16:30 -05:00",
      "2026-03-27 16:30 -04:00",
    ]);
  });

  it("an occurrence in the skipped hour moves forward by the gap; one in the repeated hour takes the first", () => {
    const s = series("FREQ=DAILY;COUNT=3", "2026-03-28T02:30", "Europe/Berlin");
    expect(occurrenceStarts(s, at("2026-03-27T00:00:00Z"), at("2026-04-01T00:00:00Z")).map((d) => local(d, "Europe/Berlin"))).toEqual([
      "2026-03-28 02:30 +01:00",
      "2026-03-29 03:30 +02:00",
      "2026-03-30 02:30 +02:00",
    ]);
    const autumn = series("FREQ=DAILY;COUNT=3", "2026-10-24T02:30", "Europe/Berlin");
    expect(occurrenceStarts(autumn, at("2026-10-23T00:00:00Z"), at("2026-10-28T00:00:00Z")).map((d) => local(d, "Europe/Berlin"))).toEqual([
      "2026-10-24 02:30 +02:00",
      "2026-10-25 02:30 +02:00",
      "2026-10-26 02:30 +01:00",
    ]);
  });

  it("a series starting in the second pass of the repeated hour starts there; its other days take the wall clock", () => {
    // 01:00 on 2027-11-07 in New York is 05:00Z (EDT) and again 06:00Z (EST): a start given as the second is kept.
    const start = at("2027-11-07T06:00:00Z");
    const checked = checkRule("FREQ=DAILY;COUNT=3", start, "America/New_York");
    expect(checked).toMatchObject({ ok: true, occurrences: 3 });
    const s: SeriesRule = { rule: "FREQ=DAILY;COUNT=3", timeZone: "America/New_York", start };
    expect(occurrenceStarts(s, at("2027-11-06T00:00:00Z"), at("2027-11-12T00:00:00Z")).map((d) => d.toISOString())).toEqual([
      "2027-11-07T06:00:00.000Z",
      "2027-11-08T06:00:00.000Z",
      "2027-11-09T06:00:00.000Z",
    ]);
    // The day before, the same wall clock repeated on the change day is its first pass.
    const before = series("FREQ=DAILY;COUNT=2", "2027-11-06T01:00", "America/New_York");
    expect(occurrenceStarts(before, at("2027-11-05T00:00:00Z"), at("2027-11-12T00:00:00Z")).map((d) => d.toISOString())).toEqual([
      "2027-11-06T05:00:00.000Z",
      "2027-11-07T05:00:00.000Z",
    ]);
  });

  it("Australia/Lord_Howe's half-hour shift: 02:15 on the change day is 02:45", () => {
    const s = series("FREQ=DAILY;COUNT=3", "2026-10-03T02:15", "Australia/Lord_Howe");
    expect(occurrenceStarts(s, at("2026-10-01T00:00:00Z"), at("2026-10-10T00:00:00Z")).map((d) => local(d, "Australia/Lord_Howe"))).toEqual([
      "2026-10-03 02:15 +10:30",
      "2026-10-04 02:45 +11:00",
      "2026-10-05 02:15 +11:00",
    ]);
    const weekly = series("FREQ=WEEKLY;COUNT=30", "2026-03-02T09:00", "Australia/Lord_Howe");
    const starts = occurrenceStarts(weekly, at("2026-01-01T00:00:00Z"), at("2027-01-01T00:00:00Z"));
    expect(new Set(starts.map((d) => local(d, "Australia/Lord_Howe").slice(11, 16)))).toEqual(new Set(["09:00"]));
    expect(new Set(starts.map((d) => local(d, "Australia/Lord_Howe").slice(17)))).toEqual(new Set(["+11:00", "+10:30"]));
  });

  it("expands only the window asked for", () => {
    const s = series("FREQ=DAILY;COUNT=730", "2026-01-01T09:00", "Asia/Kolkata");
    expect(occurrenceStarts(s, at("2027-06-01T00:00:00Z"), at("2027-06-03T00:00:00Z")).map((d) => d.toISOString())).toEqual([
      "2027-06-01T03:30:00.000Z",
      "2027-06-02T03:30:00.000Z",
    ]);
  });
});
