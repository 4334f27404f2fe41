import { describe, expect, it } from "vitest";
import { busyOfIcs } from "../src/domain/caldavBusy.js";

const calendar = (...parts: string[][]) => ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//t//EN", ...parts.flat(), "END:VCALENDAR", ""].join("\r\n");
const vevent = (lines: string[]) => ["BEGIN:VEVENT", "UID:x", "DTSTAMP:20310101T000000Z", ...lines, "END:VEVENT"];
const s = (iso: string) => Date.parse(iso) / 1_000;
const span = (start: string, end: string) => [s(start), s(end)];

/** Europe/Berlin as calendar clients write it: CET, CEST from the last Sunday of March to the last of October. */
const BERLIN = [
  "BEGIN:VTIMEZONE",
  "TZID:Europe/Berlin",
  "BEGIN:DAYLIGHT",
  "TZOFFSETFROM:+0100",
  "TZOFFSETTO:+0200",
  "TZNAME:CEST",
  "DTSTART:19700329T020000",
  "RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU",
  "END:DAYLIGHT",
  "BEGIN:STANDARD",
  "TZOFFSETFROM:+0200",
  "TZOFFSETTO:+0100",
  "TZNAME:CET",
  "DTSTART:19701025T030000",
  "RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU",
  "END:STANDARD",
  "END:VTIMEZONE",
];

/** Weekly on Thursdays, 09:00–10:00 Berlin, from 6 March 2031; summer time starts on 30 March 2031. */
const weekly = (...extra: string[]) => vevent(["DTSTART;TZID=Europe/Berlin:20310306T090000", "DTEND;TZID=Europe/Berlin:20310306T100000", "RRULE:FREQ=WEEKLY;BYDAY=TH", "SUMMARY:Standup", ...extra]);

describe("busy time of a CalDAV event", () => {
  const june = ["2031-06-01T00:00:00Z", "2031-07-01T00:00:00Z"] as const;

  it("is the event's span, in UTC whatever zone it was written in", () => {
    expect(busyOfIcs(calendar(vevent(["DTSTART:20310604T100000Z", "DTEND:20310604T110000Z"])), ...june)).toEqual([span("2031-06-04T10:00:00Z", "2031-06-04T11:00:00Z")]);
    expect(busyOfIcs(calendar(vevent(["DTSTART:20310604T100000Z", "DURATION:PT45M"])), ...june)).toEqual([span("2031-06-04T10:00:00Z", "2031-06-04T10:45:00Z")]);
    expect(busyOfIcs(calendar(BERLIN, vevent(["DTSTART;TZID=Europe/Berlin:20310604T100000", "DTEND;TZID=Europe/Berlin:20310604T110000"])), ...june)).toEqual([span("2031-06-04T08:00:00Z", "2031-06-04T09:00:00Z")]);
  });

  it("leaves out cancelled and transparent (free) events, events outside the range, and what is not iCalendar", () => {
    expect(busyOfIcs(calendar(vevent(["DTSTART:20310604T100000Z", "DTEND:20310604T110000Z", "STATUS:CANCELLED"])), ...june)).toEqual([]);
    expect(busyOfIcs(calendar(vevent(["DTSTART:20310604T100000Z", "DTEND:20310604T110000Z", "TRANSP:TRANSPARENT"])), ...june)).toEqual([]);
    expect(busyOfIcs(calendar(vevent(["DTSTART:20310704T100000Z", "DTEND:20310704T110000Z"])), ...june)).toEqual([]);
    expect(busyOfIcs("not a calendar", ...june)).toEqual([]);
  });
});

describe("busy time of a recurring CalDAV event", () => {
  it("is each occurrence in the range at 09:00 Berlin, across the change to summer time", () => {
    expect(busyOfIcs(calendar(BERLIN, weekly()), "2031-03-17T00:00:00Z", "2031-04-11T00:00:00Z")).toEqual([
      span("2031-03-20T08:00:00Z", "2031-03-20T09:00:00Z"),
      span("2031-03-27T08:00:00Z", "2031-03-27T09:00:00Z"),
      span("2031-04-03T07:00:00Z", "2031-04-03T08:00:00Z"),
      span("2031-04-10T07:00:00Z", "2031-04-10T08:00:00Z"),
    ]);
  });

  it("counts an occurrence that began before the range and runs into it, and none past COUNT or UNTIL", () => {
    expect(busyOfIcs(calendar(BERLIN, weekly()), "2031-03-20T08:30:00Z", "2031-03-21T00:00:00Z")).toEqual([span("2031-03-20T08:00:00Z", "2031-03-20T09:00:00Z")]);
    const counted = vevent(["DTSTART;TZID=Europe/Berlin:20310306T090000", "DTEND;TZID=Europe/Berlin:20310306T100000", "RRULE:FREQ=WEEKLY;COUNT=3"]);
    expect(busyOfIcs(calendar(BERLIN, counted), "2031-03-01T00:00:00Z", "2031-05-01T00:00:00Z")).toHaveLength(3);
  });

  it("leaves out an occurrence named by EXDATE", () => {
    expect(busyOfIcs(calendar(BERLIN, weekly("EXDATE;TZID=Europe/Berlin:20310403T090000")), "2031-03-24T00:00:00Z", "2031-04-11T00:00:00Z")).toEqual([
      span("2031-03-27T08:00:00Z", "2031-03-27T09:00:00Z"),
      span("2031-04-10T07:00:00Z", "2031-04-10T08:00:00Z"),
    ]);
  });

  it("counts an occurrence moved by RECURRENCE-ID at its new time, not the old", () => {
    const moved = vevent(["RECURRENCE-ID;TZID=Europe/Berlin:20310403T090000", "DTSTART;TZID=Europe/Berlin:20310404T140000", "DTEND;TZID=Europe/Berlin:20310404T153000", "SUMMARY:Standup, moved"]);
    expect(busyOfIcs(calendar(BERLIN, weekly(), moved), "2031-03-31T00:00:00Z", "2031-04-07T00:00:00Z")).toEqual([span("2031-04-04T12:00:00Z", "2031-04-04T13:30:00Z")]);
    // Moved into the range from after it.
    const intoRange = vevent(["RECURRENCE-ID;TZID=Europe/Berlin:20310410T090000", "DTSTART;TZID=Europe/Berlin:20310404T140000", "DTEND;TZID=Europe/Berlin:20310404T150000"]);
    expect(busyOfIcs(calendar(BERLIN, weekly(), intoRange), "2031-04-04T00:00:00Z", "2031-04-05T00:00:00Z")).toEqual([span("2031-04-04T12:00:00Z", "2031-04-04T13:00:00Z")]);
    // Moved out of the range.
    expect(busyOfIcs(calendar(BERLIN, weekly(), moved), "2031-04-03T00:00:00Z", "2031-04-04T00:00:00Z")).toEqual([]);
  });

  it("leaves out a cancelled occurrence, and every occurrence of a cancelled or transparent series", () => {
    const cancelled = vevent(["RECURRENCE-ID;TZID=Europe/Berlin:20310403T090000", "DTSTART;TZID=Europe/Berlin:20310403T090000", "DTEND;TZID=Europe/Berlin:20310403T100000", "STATUS:CANCELLED"]);
    expect(busyOfIcs(calendar(BERLIN, weekly(), cancelled), "2031-04-01T00:00:00Z", "2031-04-11T00:00:00Z")).toEqual([span("2031-04-10T07:00:00Z", "2031-04-10T08:00:00Z")]);
    expect(busyOfIcs(calendar(BERLIN, weekly("STATUS:CANCELLED")), "2031-04-01T00:00:00Z", "2031-04-11T00:00:00Z")).toEqual([]);
    expect(busyOfIcs(calendar(BERLIN, weekly("TRANSP:TRANSPARENT")), "2031-04-01T00:00:00Z", "2031-04-11T00:00:00Z")).toEqual([]);
  });

  it("adds the RDATE occurrences", () => {
    expect(busyOfIcs(calendar(BERLIN, weekly("RDATE;TZID=Europe/Berlin:20310405T110000")), "2031-04-04T00:00:00Z", "2031-04-06T00:00:00Z")).toEqual([span("2031-04-05T09:00:00Z", "2031-04-05T10:00:00Z")]);
  });

  it("reaches a range years after a daily series began", () => {
    const daily = vevent(["DTSTART;TZID=Europe/Berlin:20310306T090000", "DTEND;TZID=Europe/Berlin:20310306T093000", "RRULE:FREQ=DAILY"]);
    expect(busyOfIcs(calendar(BERLIN, daily), "2039-01-10T00:00:00Z", "2039-01-11T00:00:00Z")).toEqual([span("2039-01-10T08:00:00Z", "2039-01-10T08:30:00Z")]);
  });
});
