import type { Meeting, SeriesOfEvent } from "@sched/proto";
import ICAL from "ical.js";
import { describe, expect, it } from "vitest";
import { googleEventBody } from "../src/outbound/google.js";
import { calendarObject } from "../src/domain/ics.js";
import { seriesObject } from "../src/domain/seriesObject.js";

const SERIES_ID = "mtg_4kQ9sVnB2xR7tLmP0aZcY8dE";
const ORGANIZER = "org@example.com";
const series: SeriesOfEvent = { rule: "FREQ=WEEKLY;BYDAY=TU;COUNT=4", timeZone: "Europe/Berlin", cancelledStarts: [] };
const seriesMeeting: Meeting = {
  id: SERIES_ID,
  title: "Weekly planning",
  description: "",
  startTime: "2026-10-13T07:00:00Z",
  duration: "30 mins",
  participants: ["ann@example.com"],
  status: "confirmed",
  organizer: ORGANIZER,
  createdAt: "2026-10-01T10:00:00Z",
  attendees: [],
  recurrence: series.rule,
  seriesId: null,
  originalStartTime: null,
};
const occurrence = (originalStartTime: string, changes: Partial<Meeting> = {}): Meeting => ({
  ...seriesMeeting,
  id: `${SERIES_ID}_${originalStartTime.replace(/[-:]/g, "")}`,
  recurrence: null,
  seriesId: SERIES_ID,
  originalStartTime,
  ...changes,
});
const object = (meeting: Meeting, sequence: number, s: SeriesOfEvent = series) => calendarObject({ meeting, series: s, sequence, organizerEmail: ORGANIZER, uidDomain: "sched.invalid" });

function components(ics: string) {
  const calendar = new ICAL.Component(ICAL.parse(ics));
  return {
    vtimezones: calendar.getAllSubcomponents("vtimezone").map((v) => v.getFirstPropertyValue("tzid")),
    events: calendar.getAllSubcomponents("vevent").map((v) => ({
      uid: v.getFirstPropertyValue("uid"),
      recurrenceId: (v.getFirstPropertyValue("recurrence-id") as ICAL.Time | null)?.toICALString() ?? null,
      start: (v.getFirstPropertyValue("dtstart") as ICAL.Time).toICALString(),
      exdates: v.getAllProperties("exdate").flatMap((p) => p.getValues().map((t) => (t as ICAL.Time).toICALString())),
      sequence: v.getFirstPropertyValue("sequence"),
      summary: v.getFirstPropertyValue("summary"),
    })),
  };
}

describe("a series' calendar object (CalDAV)", () => {
  const uid = `${SERIES_ID}@sched.invalid`;

  it("gains a changed occurrence beside the master, replaces it when it changes again, and keeps it when the series changes", () => {
    const first = seriesObject(undefined, series, { kind: "series", ics: object(seriesMeeting, 1) });
    const moved = seriesObject(first, series, { kind: "occurrence", originalStart: "2026-10-20T07:00:00Z", ics: object(occurrence("2026-10-20T07:00:00Z", { startTime: "2026-10-20T09:00:00Z" }), 2) });
    const movedAgain = seriesObject(moved, series, { kind: "occurrence", originalStart: "2026-10-20T07:00:00Z", ics: object(occurrence("2026-10-20T07:00:00Z", { startTime: "2026-10-20T10:00:00Z" }), 3) });
    const renamed = seriesObject(movedAgain, series, { kind: "series", ics: object({ ...seriesMeeting, title: "Planning" }, 4) });
    expect(components(renamed)).toEqual({
      vtimezones: ["Europe/Berlin"],
      events: [
        { uid, recurrenceId: "20261020T090000", start: "20261020T120000", exdates: [], sequence: 3, summary: "Weekly planning" },
        { uid, recurrenceId: null, start: "20261013T090000", exdates: [], sequence: 4, summary: "Planning" },
      ],
    });
  });

  it("drops the changed copy of an occurrence the series no longer has once it moves to other times", () => {
    const first = seriesObject(undefined, series, { kind: "series", ics: object(seriesMeeting, 1) });
    const moved = seriesObject(first, series, { kind: "occurrence", originalStart: "2026-10-20T07:00:00Z", ics: object(occurrence("2026-10-20T07:00:00Z", { startTime: "2026-10-20T09:00:00Z" }), 2) });
    // Same rule, an hour later: 10:00 Berlin; 20 October 09:00 is no occurrence any more.
    const retimed = seriesObject(moved, series, { kind: "series", ics: object({ ...seriesMeeting, startTime: "2026-10-13T08:00:00Z" }, 3) });
    expect(components(retimed).events.map((e) => [e.recurrenceId, e.start])).toEqual([[null, "20261013T100000"]]);
    // Retitled only, the occurrences stay and so does the changed one.
    const retitled = seriesObject(moved, series, { kind: "series", ics: object({ ...seriesMeeting, title: "Other" }, 3) });
    expect(components(retitled).events.map((e) => [e.recurrenceId, e.start])).toEqual([
      ["20261020T090000", "20261020T110000"],
      [null, "20261013T090000"],
    ]);
  });

  it("moved to another time that keeps a changed occurrence: it comes back at its new RECURRENCE-ID, and one it holds already stays as it is", () => {
    const first = seriesObject(undefined, series, { kind: "series", ics: object(seriesMeeting, 1) });
    const moved = seriesObject(first, series, { kind: "occurrence", originalStart: "2026-10-20T07:00:00Z", ics: object(occurrence("2026-10-20T07:00:00Z", { startTime: "2026-10-20T09:00:00Z" }), 2) });
    // An hour later: 20 October's changed occurrence is kept on its day, at 10:00 Berlin (08:00Z), its own time unchanged.
    const rekeyed = { originalStart: "2026-10-20T08:00:00Z", ics: object(occurrence("2026-10-20T08:00:00Z", { startTime: "2026-10-20T09:00:00Z" }), 3) };
    const retimed = seriesObject(moved, series, { kind: "series", ics: object({ ...seriesMeeting, startTime: "2026-10-13T08:00:00Z" }, 3), occurrences: [rekeyed] });
    expect(components(retimed).events.map((e) => [e.recurrenceId, e.start, e.sequence])).toEqual([
      [null, "20261013T100000", 3],
      ["20261020T100000", "20261020T110000", 3],
    ]);
    // Sent again with the same occurrence: it is not written twice, and a copy the server holds is not replaced.
    const again = seriesObject(retimed, series, { kind: "series", ics: object({ ...seriesMeeting, startTime: "2026-10-13T08:00:00Z", title: "Renamed" }, 4), occurrences: [{ ...rekeyed, ics: object(occurrence("2026-10-20T08:00:00Z", { startTime: "2026-10-20T09:00:00Z" }), 4) }] });
    expect(components(again).events.map((e) => [e.recurrenceId, e.sequence])).toEqual([
      ["20261020T100000", 3],
      [null, 4],
    ]);
    // A first write of the series brings its changed occurrences with it.
    expect(components(seriesObject(undefined, series, { kind: "series", ics: object({ ...seriesMeeting, startTime: "2026-10-13T08:00:00Z" }, 3), occurrences: [rekeyed] })).events.map((e) => e.recurrenceId)).toEqual([null, "20261020T100000"]);
  });

  it("cancels an occurrence as an EXDATE of the master, dropping its changed copy", () => {
    const first = seriesObject(undefined, series, { kind: "series", ics: object(seriesMeeting, 1) });
    const moved = seriesObject(first, series, { kind: "occurrence", originalStart: "2026-10-27T08:00:00Z", ics: object(occurrence("2026-10-27T08:00:00Z", { startTime: "2026-10-27T10:00:00Z" }), 2) });
    const cancelled = seriesObject(moved, { ...series, cancelledStarts: ["2026-10-27T08:00:00Z"] }, { kind: "occurrence-cancelled", originalStart: "2026-10-27T08:00:00Z", sequence: 3 });
    expect(components(cancelled).events).toEqual([{ uid, recurrenceId: null, start: "20261013T090000", exdates: ["20261027T090000"], sequence: 3, summary: "Weekly planning" }]);
  });
});

describe("a series on Google", () => {
  it("is one recurring event: the rule and cancelled occurrences as recurrence lines, times in the series' zone", () => {
    const body = googleEventBody(seriesMeeting, 3, ORGANIZER, { ...series, cancelledStarts: ["2026-10-27T08:00:00Z"] });
    expect(body.recurrence).toEqual(["RRULE:FREQ=WEEKLY;BYDAY=TU;COUNT=4", "EXDATE;TZID=Europe/Berlin:20261027T090000"]);
    expect(body.start).toEqual({ dateTime: "2026-10-13T09:00:00+02:00", timeZone: "Europe/Berlin" });
    expect(body.end).toEqual({ dateTime: "2026-10-13T09:30:00+02:00", timeZone: "Europe/Berlin" });
    expect(body.sequence).toBe(3);
  });

  it("an occurrence is the body of its instance, without a rule", () => {
    const body = googleEventBody(occurrence("2026-10-27T08:00:00Z", { startTime: "2026-10-27T10:00:00Z" }), 2, ORGANIZER, series);
    expect(body.recurrence).toBeUndefined();
    expect(body.start).toEqual({ dateTime: "2026-10-27T11:00:00+01:00", timeZone: "Europe/Berlin" });
  });

  it("a single meeting stays in UTC", () => {
    const body = googleEventBody({ ...seriesMeeting, recurrence: null }, 1, ORGANIZER, null);
    expect(body.recurrence).toBeUndefined();
    expect(body.start).toEqual({ dateTime: "2026-10-13T07:00:00Z", timeZone: "UTC" });
  });
});
