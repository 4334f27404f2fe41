import { describe, expect, it } from "vitest";
import { busyOfIcs } from "../src/delivery/caldav.js";

const vevent = (lines: string[]) => ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//t//EN", "BEGIN:VEVENT", "UID:x", "DTSTAMP:20310101T000000Z", ...lines, "END:VEVENT", "END:VCALENDAR", ""].join("\r\n");
const s = (iso: string) => Date.parse(iso) / 1_000;

describe("busy time of a CalDAV event", () => {
  it("is the event's span, in UTC whatever zone it was written in", () => {
    expect(busyOfIcs(vevent(["DTSTART:20310604T100000Z", "DTEND:20310604T110000Z"]))).toEqual([[s("2031-06-04T10:00:00Z"), s("2031-06-04T11:00:00Z")]]);
    expect(busyOfIcs(vevent(["DTSTART:20310604T100000Z", "DURATION:PT45M"]))).toEqual([[s("2031-06-04T10:00:00Z"), s("2031-06-04T10:45:00Z")]]);
  });

  it("leaves out cancelled and transparent (free) events, and what is not iCalendar", () => {
    expect(busyOfIcs(vevent(["DTSTART:20310604T100000Z", "DTEND:20310604T110000Z", "STATUS:CANCELLED"]))).toEqual([]);
    expect(busyOfIcs(vevent(["DTSTART:20310604T100000Z", "DTEND:20310604T110000Z", "TRANSP:TRANSPARENT"]))).toEqual([]);
    expect(busyOfIcs("not a calendar")).toEqual([]);
  });
});
