import { describe, expect, it } from "vitest";
import type { Meeting } from "@sched/proto";
import { busyOfCalendarView, busyOfSchedule, epochMsOfGraphDateTime, graphDateTime, graphEventBody, graphResponseTime, graphSeriesBody, graphTransactionId, instanceShows, instanceWindow, isInstanceOf, responseOfGraph } from "../src/domain/graphEvent.js";

const meeting: Meeting = {
  id: "mtg_4kQ9sVnB2xR7tLmP0aZcY8dE",
  title: "Design review",
  description: "Bring sketches",
  startTime: "2031-05-06T07:15:00Z",
  duration: "45 mins",
  participants: ["org@example.com", "ann@example.com", "bob@example.com"],
  status: "confirmed",
  organizer: "org@example.com",
  createdAt: "2031-05-01T00:00:00Z",
  attendees: [],
  recurrence: null,
  seriesId: null,
  originalStartTime: null,
};

describe("Graph events of meetings", () => {
  it("derives one transactionId per meeting, the same on every try and different between meetings", () => {
    expect(graphTransactionId(meeting.id)).toBe(graphTransactionId(meeting.id));
    expect(graphTransactionId(meeting.id)).not.toBe(graphTransactionId("mtg_4kQ9sVnB2xR7tLmP0aZcY8dF"));
    expect(graphTransactionId(meeting.id)).toMatch(/^sched-[0-9a-f]{40}$/);
  });

  it("puts the participants but the organizer as required attendees, times in UTC without offset", () => {
    expect(graphEventBody(meeting, "org@example.com")).toMatchObject({
      subject: "Design review",
      body: { contentType: "text", content: "Bring sketches" },
      start: { dateTime: "2031-05-06T07:15:00", timeZone: "UTC" },
      end: { dateTime: "2031-05-06T08:00:00", timeZone: "UTC" },
      attendees: [
        { emailAddress: { address: "ann@example.com" }, type: "required" },
        { emailAddress: { address: "bob@example.com" }, type: "required" },
      ],
    });
  });

  it("reads Graph's UTC date-times with and without an offset", () => {
    expect(epochMsOfGraphDateTime({ dateTime: "2031-05-06T07:15:00.0000000" })).toBe(Date.parse("2031-05-06T07:15:00Z"));
    expect(epochMsOfGraphDateTime({ dateTime: "2031-05-06T07:15:00Z" })).toBe(Date.parse("2031-05-06T07:15:00Z"));
    expect(epochMsOfGraphDateTime({ dateTime: "nonsense" })).toBeUndefined();
    expect(epochMsOfGraphDateTime(graphDateTime(Date.parse("2031-01-02T03:04:05Z")))).toBe(Date.parse("2031-01-02T03:04:05Z"));
  });

  it("maps attendees' answers, and leaves unanswered ones out", () => {
    expect(responseOfGraph("accepted")).toBe("accepted");
    expect(responseOfGraph("declined")).toBe("declined");
    expect(responseOfGraph("tentativelyAccepted")).toBe("tentative");
    for (const none of ["none", "notResponded", "organizer", undefined, null] as const) expect(responseOfGraph(none)).toBeUndefined();
    expect(graphResponseTime("0001-01-01T00:00:00Z")).toBeUndefined();
    expect(graphResponseTime("2031-05-01T10:00:00.0000000")).toBe("2031-05-01T10:00:00Z");
    expect(graphResponseTime("2031-05-01T10:00:00Z")).toBe("2031-05-01T10:00:00Z");
  });

  it("counts busy, out-of-office and tentative schedule items as busy, in start order", () => {
    const at = (t: string) => ({ dateTime: `2031-05-06T${t}:00.0000000`, timeZone: "UTC" });
    const busy = busyOfSchedule({
      scheduleItems: [
        { status: "tentative", start: at("14:00"), end: at("15:00") },
        { status: "busy", start: at("09:00"), end: at("10:30") },
        { status: "free", start: at("11:00"), end: at("12:00") },
        { status: "workingElsewhere", start: at("12:00"), end: at("13:00") },
        { status: "oof", start: at("16:00"), end: at("17:00") },
      ],
    });
    const s = (t: string) => Date.parse(`2031-05-06T${t}:00Z`) / 1_000;
    expect(busy).toEqual([
      [s("09:00"), s("10:30")],
      [s("14:00"), s("15:00")],
      [s("16:00"), s("17:00")],
    ]);
    expect(busyOfSchedule(undefined)).toEqual([]);
  });

  it("counts calendar-view events shown busy, away or tentative and not cancelled, as getSchedule would", () => {
    const at = (t: string) => ({ dateTime: `2031-05-06T${t}:00.0000000`, timeZone: "UTC" });
    const busy = busyOfCalendarView([
      { showAs: "busy", isCancelled: false, start: at("13:00"), end: at("14:00") },
      { showAs: "free", isCancelled: false, start: at("08:00"), end: at("09:00") },
      { showAs: "oof", isCancelled: true, start: at("10:00"), end: at("11:00") },
      { showAs: "tentative", isCancelled: false, start: at("09:00"), end: at("09:30") },
      { showAs: "busy", isCancelled: false, start: at("15:00"), end: at("15:00") },
    ]);
    const s = (t: string) => Date.parse(`2031-05-06T${t}:00Z`) / 1_000;
    expect(busy).toEqual([
      [s("09:00"), s("09:30")],
      [s("13:00"), s("14:00")],
    ]);
  });
});

describe("Graph's recurring event of a series", () => {
  // Tuesdays 09:00 Berlin, first on 2031-05-06 (07:00 UTC in summer time).
  const first: Meeting = { ...meeting, startTime: "2031-05-06T07:00:00Z", recurrence: "FREQ=WEEKLY;BYDAY=TU;COUNT=10" };

  it("writes the times in the series' zone and the rule as Graph's pattern and range", () => {
    const answer = graphSeriesBody(first, { rule: "FREQ=WEEKLY;BYDAY=TU;COUNT=10", timeZone: "Europe/Berlin", cancelledStarts: [] }, "org@example.com");
    expect(answer.ok).toBe(true);
    if (!answer.ok) return;
    expect(answer.body).toMatchObject({
      subject: "Design review",
      start: { dateTime: "2031-05-06T09:00:00", timeZone: "Europe/Berlin" },
      end: { dateTime: "2031-05-06T09:45:00", timeZone: "Europe/Berlin" },
      recurrence: {
        pattern: { type: "weekly", interval: 1, daysOfWeek: ["tuesday"] },
        range: { type: "numbered", startDate: "2031-05-06", numberOfOccurrences: 10, recurrenceTimeZone: "Europe/Berlin" },
      },
    });
    expect(answer.body.attendees).toHaveLength(2);
  });

  it("refuses a rule Graph cannot say, with the reason", () => {
    const answer = graphSeriesBody(first, { rule: "FREQ=MONTHLY;BYMONTHDAY=1,15", timeZone: "Europe/Berlin", cancelledStarts: [] }, "org@example.com");
    expect(answer).toEqual({ ok: false, reason: expect.stringMatching(/Graph/) as unknown as string });
  });

  it("asks for instances over a window holding the original start and the occurrence's present times", () => {
    const moved: Meeting = { ...meeting, startTime: "2031-05-20T12:00:00Z", duration: "1 hour" };
    expect(instanceWindow("2031-05-13T07:00:00Z", moved)).toEqual({ startDateTime: "2031-05-12T07:00:00Z", endDateTime: "2031-05-21T13:00:00Z" });
  });

  it("matches an instance on its original start, whatever precision Graph writes it in", () => {
    expect(isInstanceOf({ originalStart: "2031-05-13T07:00:00Z" }, "2031-05-13T07:00:00Z")).toBe(true);
    expect(isInstanceOf({ originalStart: "2031-05-13T07:00:00.0000000Z" }, "2031-05-13T07:00:00Z")).toBe(true);
    expect(isInstanceOf({ originalStart: "2031-05-20T07:00:00Z" }, "2031-05-13T07:00:00Z")).toBe(false);
    expect(isInstanceOf({ originalStart: null }, "2031-05-13T07:00:00Z")).toBe(false);
  });
});

describe("instanceShows", () => {
  const body = {
    subject: "Moved",
    start: { dateTime: "2031-03-25T09:00:00", timeZone: "UTC" },
    end: { dateTime: "2031-03-25T09:30:00", timeZone: "UTC" },
    attendees: [{ emailAddress: { address: "ann@example.com" } }, { emailAddress: { address: "bob@example.com" } }],
  };

  it("holds for an instance with the same times (Graph's precision), subject and attendees in any order", () => {
    const instance = { ...body, start: { dateTime: "2031-03-25T09:00:00.0000000", timeZone: "UTC" }, end: { dateTime: "2031-03-25T09:30:00.0000000", timeZone: "UTC" }, attendees: [...body.attendees].reverse() };
    expect(instanceShows(instance, body)).toBe(true);
  });

  it("fails for an instance Exchange put back to the series' values", () => {
    expect(instanceShows({ ...body, start: { dateTime: "2031-03-24T08:00:00.0000000", timeZone: "UTC" } }, body)).toBe(false);
    expect(instanceShows({ ...body, subject: "Weekly" }, body)).toBe(false);
    expect(instanceShows({ ...body, attendees: body.attendees.slice(0, 1) }, body)).toBe(false);
  });
});
