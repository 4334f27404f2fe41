import type { Meeting, SeriesOfEvent } from "@sched/proto";
import ICAL from "ical.js";
import { describe, expect, it } from "vitest";
import { buildIcs, calendarObject, meetingUid } from "../src/domain/ics.js";

const SERIES_ID = "mtg_4kQ9sVnB2xR7tLmP0aZcY8dE";
const ORGANIZER = { email: "org@example.com" };
const UID_DOMAIN = "sched.invalid";

/** Weekly on Tuesdays at 09:00 Berlin from 13 October 2026: Berlin leaves summer time on 25 October. */
const series: SeriesOfEvent = { rule: "FREQ=WEEKLY;BYDAY=TU;COUNT=4", timeZone: "Europe/Berlin", cancelledStarts: [] };
const seriesMeeting: Meeting = {
  id: SERIES_ID,
  title: "Weekly planning",
  description: "",
  startTime: "2026-10-13T07:00:00Z",
  duration: "30 mins",
  participants: ["ann@example.com", "bob@example.com"],
  status: "confirmed",
  organizer: ORGANIZER.email,
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

function parse(ics: string) {
  const calendar = new ICAL.Component(ICAL.parse(ics));
  // The calendar's own VTIMEZONE places its TZID: registered as a client reading the message would.
  for (const vtimezone of calendar.getAllSubcomponents("vtimezone")) ICAL.TimezoneService.register(vtimezone);
  return { calendar, method: calendar.getFirstPropertyValue("method"), events: calendar.getAllSubcomponents("vevent").map((v) => new ICAL.Event(v)) };
}

/** The occurrences a client expands from the parsed event, as UTC instants and as wall-clock times in Berlin. */
function expand(event: ICAL.Event, limit = 10) {
  const iterator = event.iterator();
  const starts: ICAL.Time[] = [];
  for (let next = iterator.next(); next && starts.length < limit; next = iterator.next()) starts.push(next);
  return starts.map((start) => ({
    utc: start.toJSDate().toISOString(),
    berlin: new Intl.DateTimeFormat("en-GB", { timeZone: "Europe/Berlin", weekday: "short", hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(start.toJSDate()),
  }));
}

describe("a series invite", () => {
  it("is one event with the rule, expanded by the client in Berlin: 09:00 before and after summer time ends", () => {
    const ics = buildIcs({ meeting: seriesMeeting, series, sequence: 1, kind: "request", recipient: "ann@example.com", organizer: ORGANIZER, uidDomain: UID_DOMAIN });
    const { calendar, method, events } = parse(ics);
    expect(method).toBe("REQUEST");
    expect(events).toHaveLength(1);
    const [event] = events as [ICAL.Event];
    expect(event.uid).toBe(meetingUid(SERIES_ID, UID_DOMAIN));
    expect(event.isRecurring()).toBe(true);
    expect(event.component.getFirstProperty("dtstart")!.getParameter("tzid")).toBe("Europe/Berlin");
    expect(event.startDate.toString()).toBe("2026-10-13T09:00:00");
    expect(calendar.getFirstSubcomponent("vtimezone")!.getFirstPropertyValue("tzid")).toBe("Europe/Berlin");
    expect(String(event.component.getFirstPropertyValue("rrule"))).toBe("FREQ=WEEKLY;COUNT=4;BYDAY=TU");
    expect(expand(event)).toEqual([
      { utc: "2026-10-13T07:00:00.000Z", berlin: "Tue 09:00" },
      { utc: "2026-10-20T07:00:00.000Z", berlin: "Tue 09:00" },
      { utc: "2026-10-27T08:00:00.000Z", berlin: "Tue 09:00" },
      { utc: "2026-11-03T08:00:00.000Z", berlin: "Tue 09:00" },
    ]);
    expect(event.endDate.toString()).toBe("2026-10-13T09:30:00");
    expect(event.attendees.map((a) => String(a.getFirstValue()).toLowerCase())).toEqual(["mailto:ann@example.com", "mailto:bob@example.com"]);
  });

  it("leaves out cancelled occurrences as EXDATE in the series' zone", () => {
    const ics = buildIcs({ meeting: seriesMeeting, series: { ...series, cancelledStarts: ["2026-10-27T08:00:00Z"] }, sequence: 3, kind: "request", recipient: "ann@example.com", organizer: ORGANIZER, uidDomain: UID_DOMAIN });
    const [event] = parse(ics).events as [ICAL.Event];
    const exdate = event.component.getFirstProperty("exdate")!;
    expect(exdate.getParameter("tzid")).toBe("Europe/Berlin");
    expect(exdate.getFirstValue()!.toString()).toBe("2026-10-27T09:00:00");
    expect(expand(event).map((o) => o.utc)).toEqual(["2026-10-13T07:00:00.000Z", "2026-10-20T07:00:00.000Z", "2026-11-03T08:00:00.000Z"]);
    expect(event.sequence).toBe(3);
  });

  it("in UTC when the series' zone is UTC: no VTIMEZONE, times with Z", () => {
    const ics = buildIcs({ meeting: seriesMeeting, series: { ...series, timeZone: "UTC" }, sequence: 1, kind: "request", recipient: "ann@example.com", organizer: ORGANIZER, uidDomain: UID_DOMAIN });
    const { calendar, events } = parse(ics);
    expect(calendar.getFirstSubcomponent("vtimezone")).toBeNull();
    expect(ics).toContain("DTSTART:20261013T070000Z");
    expect(expand(events[0]!).map((o) => o.utc)).toEqual(["2026-10-13T07:00:00.000Z", "2026-10-20T07:00:00.000Z", "2026-10-27T07:00:00.000Z", "2026-11-03T07:00:00.000Z"]);
  });

  it("cancelled as a whole is one CANCEL of the UID, without RECURRENCE-ID", () => {
    const ics = buildIcs({ meeting: { ...seriesMeeting, status: "cancelled" }, series, sequence: 5, kind: "cancel", recipient: "ann@example.com", organizer: ORGANIZER, uidDomain: UID_DOMAIN });
    const { method, events } = parse(ics);
    expect(method).toBe("CANCEL");
    expect(events).toHaveLength(1);
    expect(events[0]!.uid).toBe(meetingUid(SERIES_ID, UID_DOMAIN));
    expect(events[0]!.component.getFirstPropertyValue("recurrence-id")).toBeNull();
    expect(events[0]!.component.getFirstPropertyValue("status")).toBe("CANCELLED");
    expect(events[0]!.attendees).toHaveLength(2);
  });
});

describe("an exception of a series", () => {
  it("is an update of that occurrence only: the series' UID, its RECURRENCE-ID in the series' zone, its own SEQUENCE, no rule", () => {
    // The occurrence of 27 October (09:00 Berlin, winter time) moved to 11:00 Berlin.
    const moved = occurrence("2026-10-27T08:00:00Z", { startTime: "2026-10-27T10:00:00Z", title: "Planning, later" });
    const ics = buildIcs({ meeting: moved, series, sequence: 2, kind: "request", recipient: "ann@example.com", organizer: ORGANIZER, uidDomain: UID_DOMAIN });
    const { method, events } = parse(ics);
    expect(method).toBe("REQUEST");
    expect(events).toHaveLength(1);
    const [event] = events as [ICAL.Event];
    expect(event.uid).toBe(meetingUid(SERIES_ID, UID_DOMAIN));
    expect(event.isRecurrenceException()).toBe(true);
    expect(event.isRecurring()).toBe(false);
    expect(event.recurrenceId.toString()).toBe("2026-10-27T09:00:00");
    expect(event.component.getFirstProperty("recurrence-id")!.getParameter("tzid")).toBe("Europe/Berlin");
    expect(event.recurrenceId.toJSDate().toISOString()).toBe("2026-10-27T08:00:00.000Z");
    expect(event.startDate.toJSDate().toISOString()).toBe("2026-10-27T10:00:00.000Z");
    expect(event.sequence).toBe(2);
    expect(event.summary).toBe("Planning, later");
  });

  it("replaces that occurrence when a client applies it to the series", () => {
    const master = parse(buildIcs({ meeting: seriesMeeting, series, sequence: 1, kind: "request", recipient: "ann@example.com", organizer: ORGANIZER, uidDomain: UID_DOMAIN })).events[0]!;
    const exception = parse(buildIcs({ meeting: occurrence("2026-10-20T07:00:00Z", { startTime: "2026-10-21T07:00:00Z" }), series, sequence: 2, kind: "request", recipient: "ann@example.com", organizer: ORGANIZER, uidDomain: UID_DOMAIN })).events[0]!;
    master.relateException(exception);
    const iterator = master.iterator();
    const starts: string[] = [];
    for (let next = iterator.next(); next; next = iterator.next()) starts.push(master.getOccurrenceDetails(next).startDate.toJSDate().toISOString());
    expect(starts).toEqual(["2026-10-13T07:00:00.000Z", "2026-10-21T07:00:00.000Z", "2026-10-27T08:00:00.000Z", "2026-11-03T08:00:00.000Z"]);
  });

  it("cancelled is a CANCEL of that occurrence (RECURRENCE-ID), to everyone", () => {
    const ics = buildIcs({ meeting: occurrence("2026-11-03T08:00:00Z", { status: "cancelled" }), series, sequence: 4, kind: "cancel", recipient: "bob@example.com", organizer: ORGANIZER, uidDomain: UID_DOMAIN });
    const { method, events } = parse(ics);
    expect(method).toBe("CANCEL");
    expect(events).toHaveLength(1);
    expect(events[0]!.uid).toBe(meetingUid(SERIES_ID, UID_DOMAIN));
    expect(events[0]!.recurrenceId.toJSDate().toISOString()).toBe("2026-11-03T08:00:00.000Z");
    expect(events[0]!.sequence).toBe(4);
    expect(events[0]!.component.getFirstPropertyValue("rrule")).toBeNull();
    expect(events[0]!.attendees.map((a) => String(a.getFirstValue()).toLowerCase())).toEqual(["mailto:ann@example.com", "mailto:bob@example.com"]);
  });
});

describe("a series sent again after its occurrences were changed", () => {
  /** 20 October moved to Wednesday 10:00 Berlin with Cy added; 3 November renamed; 27 October cancelled; 13 October over by now. */
  const changed: SeriesOfEvent = {
    ...series,
    cancelledStarts: ["2026-10-27T08:00:00Z"],
    changedOccurrences: [
      { originalStartTime: "2026-10-13T07:00:00Z", title: "Weekly planning", description: "", startTime: "2026-10-13T07:00:00Z", duration: "30 mins", participants: ["ann@example.com"], sequence: 2 },
      { originalStartTime: "2026-10-20T07:00:00Z", title: "Planning, moved", description: "", startTime: "2026-10-21T08:00:00Z", duration: "1 hour", participants: ["ann@example.com", "bob@example.com", "cy@example.com"], sequence: 3 },
      { originalStartTime: "2026-11-03T08:00:00Z", title: "Planning, renamed", description: "", startTime: "2026-11-03T08:00:00Z", duration: "30 mins", participants: ["ann@example.com", "bob@example.com"], sequence: 4 },
    ],
  };
  const now = Date.parse("2026-10-14T00:00:00Z");

  it("carries the series and every changed occurrence not yet ended (RECURRENCE-ID), the cancelled one as EXDATE: a client keeps the moved one where it went", () => {
    const ics = buildIcs({ meeting: { ...seriesMeeting, title: "Weekly planning (new)" }, series: changed, sequence: 6, kind: "request", recipient: "ann@example.com", organizer: ORGANIZER, uidDomain: UID_DOMAIN, now });
    const { method, events } = parse(ics);
    expect(method).toBe("REQUEST");
    expect(events.map((e) => [e.uid, e.isRecurring(), e.isRecurrenceException(), e.sequence])).toEqual([
      [meetingUid(SERIES_ID, UID_DOMAIN), true, false, 6],
      [meetingUid(SERIES_ID, UID_DOMAIN), false, true, 6],
      [meetingUid(SERIES_ID, UID_DOMAIN), false, true, 6],
    ]);
    const [master, moved, renamed] = events as [ICAL.Event, ICAL.Event, ICAL.Event];
    expect(master.component.getFirstProperty("exdate")!.getFirstValue()!.toString()).toBe("2026-10-27T09:00:00");
    expect([moved.recurrenceId.toString(), moved.component.getFirstProperty("recurrence-id")!.getParameter("tzid")]).toEqual(["2026-10-20T09:00:00", "Europe/Berlin"]);
    expect([moved.summary, moved.startDate.toJSDate().toISOString(), moved.endDate.toJSDate().toISOString()]).toEqual(["Planning, moved", "2026-10-21T08:00:00.000Z", "2026-10-21T09:00:00.000Z"]);
    expect(moved.attendees.map((a) => String(a.getFirstValue()).toLowerCase())).toEqual(["mailto:ann@example.com", "mailto:bob@example.com", "mailto:cy@example.com"]);
    expect(renamed.summary).toBe("Planning, renamed");
    // As a client reads the message: the series with its overrides related.
    master.relateException(moved);
    master.relateException(renamed);
    const iterator = master.iterator();
    const seen: string[][] = [];
    for (let next = iterator.next(); next; next = iterator.next()) {
      const details = master.getOccurrenceDetails(next);
      seen.push([details.startDate.toJSDate().toISOString(), details.item.summary]);
    }
    expect(seen).toEqual([
      ["2026-10-13T07:00:00.000Z", "Weekly planning (new)"],
      ["2026-10-21T08:00:00.000Z", "Planning, moved"],
      ["2026-11-03T08:00:00.000Z", "Planning, renamed"],
    ]);
  });

  it("is the series alone when no occurrence was changed, and a message about one occurrence carries that occurrence only", () => {
    expect(parse(buildIcs({ meeting: seriesMeeting, series, sequence: 1, kind: "request", recipient: "ann@example.com", organizer: ORGANIZER, uidDomain: UID_DOMAIN, now })).events).toHaveLength(1);
    const single = buildIcs({ meeting: occurrence("2026-11-03T08:00:00Z", { title: "Planning, renamed" }), series: changed, sequence: 4, kind: "request", recipient: "ann@example.com", organizer: ORGANIZER, uidDomain: UID_DOMAIN, now });
    expect(parse(single).events.map((e) => e.recurrenceId.toJSDate().toISOString())).toEqual(["2026-11-03T08:00:00.000Z"]);
  });

  it("cancelled, tells someone added to one occurrence only a CANCEL of that occurrence", () => {
    const ics = buildIcs({ meeting: { ...seriesMeeting, status: "cancelled" }, series: changed, sequence: 7, kind: "cancel", recipient: "cy@example.com", organizer: ORGANIZER, uidDomain: UID_DOMAIN, now });
    const { method, events } = parse(ics);
    expect(method).toBe("CANCEL");
    expect(events).toHaveLength(1);
    expect([events[0]!.uid, events[0]!.recurrenceId.toJSDate().toISOString(), events[0]!.sequence]).toEqual([meetingUid(SERIES_ID, UID_DOMAIN), "2026-10-20T07:00:00.000Z", 7]);
    expect(events[0]!.component.getFirstPropertyValue("status")).toBe("CANCELLED");
    expect(events[0]!.attendees.map((a) => String(a.getFirstValue()).toLowerCase())).toEqual(["mailto:cy@example.com"]);
    // A participant of the series gets the CANCEL of the whole UID.
    const whole = parse(buildIcs({ meeting: { ...seriesMeeting, status: "cancelled" }, series: changed, sequence: 7, kind: "cancel", recipient: "bob@example.com", organizer: ORGANIZER, uidDomain: UID_DOMAIN, now }));
    expect(whole.events.map((e) => e.component.getFirstPropertyValue("recurrence-id"))).toEqual([null]);
  });

  it("moved to another time, tells someone added to a dropped occurrence a CANCEL of it, and the others the series without it", () => {
    const retimed: SeriesOfEvent = { ...series, droppedOccurrences: changed.changedOccurrences!.slice(1, 2) };
    const moved = { ...seriesMeeting, startTime: "2026-10-13T08:00:00Z" };
    const cancel = parse(buildIcs({ meeting: moved, series: retimed, sequence: 8, kind: "cancel", recipient: "cy@example.com", organizer: ORGANIZER, uidDomain: UID_DOMAIN, now }));
    expect(cancel.method).toBe("CANCEL");
    expect(cancel.events.map((e) => e.recurrenceId.toJSDate().toISOString())).toEqual(["2026-10-20T07:00:00.000Z"]);
    const request = parse(buildIcs({ meeting: moved, series: retimed, sequence: 8, kind: "request", recipient: "ann@example.com", organizer: ORGANIZER, uidDomain: UID_DOMAIN, now }));
    expect(request.events).toHaveLength(1);
  });
});

describe("a series sent again: each recipient gets the changed occurrences that are theirs", () => {
  const now = Date.parse("2026-10-14T00:00:00Z");
  /** 20 October moved with Cy added; 3 November without Bob. */
  const changed: SeriesOfEvent = {
    ...series,
    changedOccurrences: [
      { originalStartTime: "2026-10-20T07:00:00Z", title: "Planning, moved", description: "", startTime: "2026-10-21T08:00:00Z", duration: "30 mins", participants: ["ann@example.com", "bob@example.com", "cy@example.com"], sequence: 3 },
      { originalStartTime: "2026-11-03T08:00:00Z", title: "Planning without Bob", description: "", startTime: "2026-11-03T08:00:00Z", duration: "30 mins", participants: ["ann@example.com"], sequence: 4 },
    ],
  };
  const request = (recipient: string, seriesOfEvent = changed, meeting = seriesMeeting) => parse(buildIcs({ meeting, series: seriesOfEvent, sequence: 6, kind: "request", recipient, organizer: ORGANIZER, uidDomain: UID_DOMAIN, now }));
  const recurrenceIds = (events: ICAL.Event[]) => events.filter((e) => e.isRecurrenceException()).map((e) => e.recurrenceId.toJSDate().toISOString());

  it("a participant of the series: the overrides that list them, and as EXDATE the occurrences that leave them out", () => {
    const ann = request("ann@example.com");
    expect(recurrenceIds(ann.events)).toEqual(["2026-10-20T07:00:00.000Z", "2026-11-03T08:00:00.000Z"]);
    expect(ann.events[0]!.component.getFirstProperty("exdate")).toBeNull();
    const bob = request("bob@example.com");
    expect(recurrenceIds(bob.events)).toEqual(["2026-10-20T07:00:00.000Z"]);
    expect(bob.events[0]!.component.getAllProperties("exdate").map((p) => p.getFirstValue()!.toString())).toEqual(["2026-11-03T09:00:00"]);
    // As Bob's client expands it: no 3 November.
    const master = bob.events[0]!;
    master.relateException(bob.events[1]!);
    const seen: string[] = [];
    const iterator = master.iterator();
    for (let next = iterator.next(); next; next = iterator.next()) seen.push(master.getOccurrenceDetails(next).startDate.toJSDate().toISOString());
    expect(seen).toEqual(["2026-10-13T07:00:00.000Z", "2026-10-21T08:00:00.000Z", "2026-10-27T08:00:00.000Z"]);
  });

  it("someone on one occurrence alone, whose occurrence a new time re-keyed: no series, their occurrence at its new RECURRENCE-ID and the old one cancelled", () => {
    const dropped = changed.changedOccurrences![0]!;
    const rekeyed = { ...dropped, originalStartTime: "2026-10-20T08:00:00Z", sequence: 7 };
    const retimed: SeriesOfEvent = { ...series, changedOccurrences: [rekeyed], droppedOccurrences: [dropped] };
    const cy = request("cy@example.com", retimed, { ...seriesMeeting, startTime: "2026-10-13T08:00:00Z" });
    expect(cy.method).toBe("REQUEST");
    expect(cy.events.map((e) => [e.isRecurring(), e.recurrenceId?.toJSDate().toISOString(), e.component.getFirstPropertyValue("status")])).toEqual([
      [false, "2026-10-20T08:00:00.000Z", "CONFIRMED"],
      [false, "2026-10-20T07:00:00.000Z", "CANCELLED"],
    ]);
    expect(cy.events[0]!.attendees.map((a) => String(a.getFirstValue()).toLowerCase())).toEqual(["mailto:ann@example.com", "mailto:bob@example.com", "mailto:cy@example.com"]);
    expect(cy.events[1]!.attendees.map((a) => String(a.getFirstValue()).toLowerCase())).toEqual(["mailto:cy@example.com"]);
  });
});

describe("a series in the organizer's calendar", () => {
  it("is one VEVENT with the rule and the zone", () => {
    const ics = calendarObject({ meeting: seriesMeeting, series, sequence: 1, organizerEmail: ORGANIZER.email, uidDomain: UID_DOMAIN });
    const { method, events } = parse(ics);
    expect(method).toBeNull();
    expect(events).toHaveLength(1);
    expect(expand(events[0]!).map((o) => o.berlin)).toEqual(["Tue 09:00", "Tue 09:00", "Tue 09:00", "Tue 09:00"]);
  });
});
