import { describe, expect, it } from "vitest";
import { storedMeetingsOf, type MeetingEvent } from "../src/domain/seriesHistory.js";

const SERIES = "mtg_4kQ9sVnB2xR7tLmP0aZcY8dE";
const NOW = Date.parse("2031-06-01T00:00:00Z");

function seriesEvent(change: { startTime?: string; rule?: string; cancelledStarts?: string[]; status?: "confirmed" | "cancelled"; sequence?: number } = {}): MeetingEvent {
  const startTime = change.startTime ?? "2031-01-06T08:00:00Z";
  return {
    eventId: "evt_1",
    meetingId: SERIES,
    mode: "test",
    organizer: { userId: "usr_ana", email: "Ana@example.com" },
    meeting: {
      id: SERIES, title: "Weekly", description: "", startTime, duration: "1 hour", participants: ["bo@example.com"], status: change.status ?? "confirmed",
      organizer: "ana@example.com", createdAt: "2031-01-01T00:00:00Z", attendees: [], recurrence: change.rule ?? "FREQ=WEEKLY;COUNT=52", seriesId: null, originalStartTime: null,
    },
    series: { rule: change.rule ?? "FREQ=WEEKLY;COUNT=52", timeZone: "Europe/Berlin", cancelledStarts: change.cancelledStarts ?? [] },
    sequence: change.sequence ?? 1,
    sendInvites: false,
    occurredAt: "2031-01-01T00:00:00Z",
  };
}

describe("a series in the history", () => {
  it("is its occurrences from the history window on, each under its occurrence id, at the organizer's wall clock", () => {
    const stored = storedMeetingsOf(seriesEvent(), NOW);
    // 52 Mondays from 6 January 2031; the window opens 180 days before 1 June, on 3 December 2030: all of them.
    expect(stored).toHaveLength(52);
    expect(stored[0]).toEqual({
      meetingId: `${SERIES}_20310106T080000Z`, seriesId: SERIES, mode: "test", sequence: 1, confirmed: true,
      start: new Date("2031-01-06T08:00:00Z"), end: new Date("2031-01-06T09:00:00Z"), scheduledAt: new Date("2031-01-01T00:00:00Z"), attendees: ["ana@example.com", "bo@example.com"],
    });
    // Summer time: still 09:00 in Berlin.
    expect(stored.find((s) => s.start.toISOString().startsWith("2031-06-02"))!.meetingId).toBe(`${SERIES}_20310602T070000Z`);
    // A later "now" leaves out what is older than the window.
    expect(storedMeetingsOf(seriesEvent(), Date.parse("2031-12-01T00:00:00Z")).length).toBeLessThan(52);
  });

  it("cancelled occurrences and a cancelled series count as not confirmed", () => {
    const stored = storedMeetingsOf(seriesEvent({ cancelledStarts: ["2031-01-13T08:00:00Z"] }), NOW);
    expect(stored.filter((s) => !s.confirmed).map((s) => s.meetingId)).toEqual([`${SERIES}_20310113T080000Z`]);
    expect(storedMeetingsOf(seriesEvent({ status: "cancelled" }), NOW).every((s) => !s.confirmed)).toBe(true);
  });

  it("a new rule stops counting the occurrences it no longer has", () => {
    const before = storedMeetingsOf(seriesEvent({ rule: "FREQ=WEEKLY;COUNT=3" }), NOW).map((s) => s.meetingId);
    const after = storedMeetingsOf(seriesEvent({ rule: "FREQ=WEEKLY;COUNT=2", sequence: 2 }), NOW, before);
    expect(after.map((s) => [s.meetingId.slice(-16), s.confirmed, s.sequence, s.attendees.length])).toEqual([
      ["20310106T080000Z", true, 2, 2],
      ["20310113T080000Z", true, 2, 2],
      ["20310120T080000Z", false, 2, 0],
    ]);
  });

  it("an event about one occurrence (an exception) or a single meeting is that one meeting", () => {
    const base = seriesEvent();
    const occurrence = `${SERIES}_20310113T080000Z`;
    const exception: MeetingEvent = { ...base, meetingId: occurrence, meeting: { ...base.meeting, id: occurrence, startTime: "2031-01-14T15:00:00Z", recurrence: null, seriesId: SERIES, originalStartTime: "2031-01-13T08:00:00Z" } };
    expect(storedMeetingsOf(exception, NOW)).toEqual([expect.objectContaining({ meetingId: occurrence, seriesId: SERIES, start: new Date("2031-01-14T15:00:00Z"), confirmed: true })]);
    const single: MeetingEvent = { ...base, series: undefined, meeting: { ...base.meeting, recurrence: null } };
    expect(storedMeetingsOf(single, NOW)).toEqual([expect.objectContaining({ meetingId: SERIES, seriesId: null, start: new Date("2031-01-06T08:00:00Z") })]);
  });
});

describe("a change of a series in the history", () => {
  /** The series renamed on `occurredAt` (meeting.updated), carrying its changed occurrences not yet ended. */
  function renamed(occurredAt: string, changedOccurrences: NonNullable<MeetingEvent["series"]>["changedOccurrences"] = []): MeetingEvent {
    const base = seriesEvent({ rule: "FREQ=WEEKLY;COUNT=6", sequence: 5 });
    return { ...base, occurredAt, series: { ...base.series!, changedOccurrences }, previousStatus: "confirmed", previousParticipants: ["bo@example.com"], changedFields: ["title"] } as MeetingEvent;
  }
  const moved = { originalStartTime: "2031-01-27T08:00:00Z", title: "Weekly", description: "", startTime: "2031-01-29T14:00:00Z", duration: "30 mins" as const, participants: ["cy@example.com"], sequence: 3 };

  it("keeps an occurrence moved on its own at its own time, length and attendees", () => {
    const stored = storedMeetingsOf(renamed("2031-01-02T00:00:00Z", [moved]), NOW);
    const occurrence = stored.filter((s) => s.meetingId === `${SERIES}_20310127T080000Z`);
    expect(occurrence).toEqual([
      { meetingId: `${SERIES}_20310127T080000Z`, seriesId: SERIES, mode: "test", sequence: 5, confirmed: true, start: new Date("2031-01-29T14:00:00Z"), end: new Date("2031-01-29T14:30:00Z"), scheduledAt: new Date("2031-01-01T00:00:00Z"), attendees: ["ana@example.com", "cy@example.com"] },
    ]);
    expect(stored).toHaveLength(6);
  });

  it("leaves the occurrences ended before the change as history has them, and does not stop counting them", () => {
    const ended = [`${SERIES}_20310106T080000Z`, `${SERIES}_20310113T080000Z`];
    const stored = storedMeetingsOf(renamed("2031-01-20T12:00:00Z"), NOW, ended);
    expect(stored.map((s) => s.meetingId.slice(-16))).toEqual(["20310127T080000Z", "20310203T080000Z", "20310210T080000Z"]);
  });
});
