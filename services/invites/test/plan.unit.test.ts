import type { Meeting } from "@sched/proto";
import { describe, expect, it } from "vitest";
import { changeOf, orderingIdOf, plannedDeliveries, type MeetingEvent } from "../src/domain/plan.js";

const meeting = (participants: string[], status: Meeting["status"] = "confirmed"): Meeting => ({
  id: "mtg_aaaaaaaaaaaaaaaaaaaaaaaa",
  title: "T",
  description: "",
  startTime: "2031-01-01T10:00:00Z",
  duration: "30 mins",
  participants,
  status,
  organizer: "org@example.com",
  createdAt: "2030-12-01T10:00:00Z",
  attendees: [],
  recurrence: null, seriesId: null, originalStartTime: null,
});

const base = { eventId: "e", meetingId: "mtg_aaaaaaaaaaaaaaaaaaaaaaaa", mode: "live" as const, organizer: { userId: "usr_1", email: "org@example.com" }, occurredAt: "2030-12-01T10:00:00Z" };
const created = (participants: string[], sendInvites = true): MeetingEvent => ({ ...base, meeting: meeting(participants), sequence: 1, sendInvites });
const updated = (participants: string[], previousParticipants: string[], previousStatus: Meeting["status"] = "confirmed", status: Meeting["status"] = "confirmed"): MeetingEvent => ({
  ...base,
  meeting: meeting(participants, status),
  sequence: 2,
  sendInvites: true,
  changedFields: ["participants"],
  previousStatus,
  previousParticipants,
});

describe("plannedDeliveries", () => {
  it("invites every participant of a new meeting but the organizer", () => {
    expect(plannedDeliveries(created(["a@example.com", "org@example.com", "b@example.com"]))).toEqual([
      { email: "a@example.com", kind: "request" },
      { email: "b@example.com", kind: "request" },
    ]);
  });

  it("sends nothing when the event says participants are not to hear of it", () => {
    expect(plannedDeliveries(created(["a@example.com"], false))).toEqual([]);
  });

  it("updates the current participants and cancels for the removed ones", () => {
    expect(plannedDeliveries(updated(["a@example.com", "c@example.com"], ["a@example.com", "b@example.com"]))).toEqual([
      { email: "a@example.com", kind: "request" },
      { email: "c@example.com", kind: "request" },
      { email: "b@example.com", kind: "cancel" },
    ]);
  });

  it("takes nothing back from the participants of a draft, who never had an invitation", () => {
    expect(plannedDeliveries(updated(["a@example.com"], ["a@example.com", "b@example.com"], "draft"))).toEqual([{ email: "a@example.com", kind: "request" }]);
  });

  it("cancels for everyone who had the meeting when it is cancelled, once each", () => {
    expect(plannedDeliveries(updated(["a@example.com"], ["a@example.com", "b@example.com"], "confirmed", "cancelled"))).toEqual([
      { email: "a@example.com", kind: "cancel" },
      { email: "b@example.com", kind: "cancel" },
    ]);
  });

  it("cancels for every participant of a removed meeting, which arrives marked cancelled", () => {
    const removed: MeetingEvent = { ...base, meeting: meeting(["a@example.com", "org@example.com"], "cancelled"), sequence: 3, sendInvites: true, previousStatus: "confirmed", previousParticipants: ["a@example.com", "org@example.com"] };
    expect(plannedDeliveries(removed)).toEqual([{ email: "a@example.com", kind: "cancel" }]);
    expect(plannedDeliveries({ ...removed, sendInvites: false })).toEqual([]);
  });
});

describe("a series and its exceptions", () => {
  const SERIES = "mtg_aaaaaaaaaaaaaaaaaaaaaaaa";
  const series = { rule: "FREQ=WEEKLY;COUNT=4", timeZone: "Europe/Berlin", cancelledStarts: [] };
  const seriesCreated: MeetingEvent = { ...created(["a@example.com", "b@example.com"]), meeting: { ...meeting(["a@example.com", "b@example.com"]), recurrence: series.rule, seriesId: null, originalStartTime: null }, series };
  const occurrence = (participants: string[], status: Meeting["status"]) => ({
    ...meeting(participants, status),
    id: `${SERIES}_20310101T100000Z`,
    recurrence: null,
    seriesId: SERIES,
    originalStartTime: "2031-01-01T10:00:00Z",
  });
  const exception = (participants: string[], previousParticipants: string[], status: Meeting["status"] = "confirmed"): MeetingEvent => ({
    ...updated(participants, previousParticipants, "confirmed", status),
    meetingId: `${SERIES}_20310101T100000Z`,
    meeting: occurrence(participants, status),
    sequence: 4,
    series,
  });

  it("invites each participant of a series once, to the whole series", () => {
    expect(plannedDeliveries(seriesCreated)).toEqual([
      { email: "a@example.com", kind: "request" },
      { email: "b@example.com", kind: "request" },
    ]);
  });

  it("tells the participants of one changed occurrence of that occurrence, and cancels it for one removed from it only", () => {
    expect(plannedDeliveries(exception(["a@example.com"], ["a@example.com", "b@example.com"]))).toEqual([
      { email: "a@example.com", kind: "request" },
      { email: "b@example.com", kind: "cancel" },
    ]);
    expect(plannedDeliveries(exception(["a@example.com", "b@example.com"], ["a@example.com", "b@example.com"], "cancelled"))).toEqual([
      { email: "a@example.com", kind: "cancel" },
      { email: "b@example.com", kind: "cancel" },
    ]);
  });

  it("keeps an exception's change under the occurrence, ordered among the series' changes", () => {
    const change = changeOf(exception(["a@example.com"], ["a@example.com"]));
    expect([change.meetingId, change.sequence, change.series]).toEqual([`${SERIES}_20310101T100000Z`, 4, series]);
    expect(orderingIdOf(change)).toBe(SERIES);
    expect(orderingIdOf(changeOf(seriesCreated))).toBe(SERIES);
    expect(orderingIdOf(changeOf(created(["a@example.com"])))).toBeNull();
  });
});

describe("plannedDeliveries of a series with occurrences changed on their own", () => {
  const SERIES = "mtg_aaaaaaaaaaaaaaaaaaaaaaaa";
  const seriesMeeting = (status: Meeting["status"] = "confirmed"): Meeting => ({ ...meeting(["a@example.com", "b@example.com"], status), recurrence: "FREQ=WEEKLY;COUNT=4" });
  const extra = { originalStartTime: "2031-01-08T10:00:00Z", title: "T", description: "", startTime: "2031-01-09T10:00:00Z", duration: "30 mins" as const, participants: ["a@example.com", "b@example.com", "x@example.com"], sequence: 2 };
  const series = { rule: "FREQ=WEEKLY;COUNT=4", timeZone: "Europe/Berlin", cancelledStarts: [] };
  const change = (status: Meeting["status"], seriesOfEvent: object, changedFields: Array<"status" | "startTime">): MeetingEvent => ({
    ...base,
    meetingId: SERIES,
    meeting: seriesMeeting(status),
    series: { ...series, ...seriesOfEvent },
    sequence: 3,
    sendInvites: true,
    changedFields,
    previousStatus: "confirmed",
    previousParticipants: ["a@example.com", "b@example.com"],
  });

  it("cancelled: the series' participants and whoever was added to one of its changed occurrences", () => {
    expect(plannedDeliveries(change("cancelled", { changedOccurrences: [extra] }, ["status"]))).toEqual([
      { email: "a@example.com", kind: "cancel" },
      { email: "b@example.com", kind: "cancel" },
      { email: "x@example.com", kind: "cancel" },
    ]);
  });

  it("moved so that a changed occurrence goes: its added participant gets a cancellation, the series' an update", () => {
    expect(plannedDeliveries(change("confirmed", { droppedOccurrences: [extra] }, ["startTime"]))).toEqual([
      { email: "a@example.com", kind: "request" },
      { email: "b@example.com", kind: "request" },
      { email: "x@example.com", kind: "cancel" },
    ]);
  });

  it("moved to a new time that keeps their occurrence under a new RECURRENCE-ID: its added participant gets a request (the new one, the old one cancelled)", () => {
    const rekeyed = { ...extra, originalStartTime: "2031-01-08T11:00:00Z", startTime: "2031-01-09T10:00:00Z" };
    expect(plannedDeliveries(change("confirmed", { changedOccurrences: [rekeyed], droppedOccurrences: [extra] }, ["startTime"]))).toEqual([
      { email: "a@example.com", kind: "request" },
      { email: "b@example.com", kind: "request" },
      { email: "x@example.com", kind: "request" },
    ]);
  });

  it("changed otherwise: the occurrence stays, and its added participant hears nothing of the series", () => {
    expect(plannedDeliveries(change("confirmed", { changedOccurrences: [extra] }, ["startTime"]))).toEqual([
      { email: "a@example.com", kind: "request" },
      { email: "b@example.com", kind: "request" },
    ]);
  });
});

describe("plannedDeliveries of one occurrence cancelled", () => {
  it("cancels it for everyone it had, those added to it alone included", () => {
    const occurrence: Meeting = { ...meeting(["a@example.com", "x@example.com"], "cancelled"), id: "mtg_aaaaaaaaaaaaaaaaaaaaaaaa_20310108T100000Z", seriesId: "mtg_aaaaaaaaaaaaaaaaaaaaaaaa", originalStartTime: "2031-01-08T10:00:00Z" };
    const event: MeetingEvent = {
      ...base,
      meetingId: occurrence.id,
      meeting: occurrence,
      series: { rule: "FREQ=WEEKLY;COUNT=4", timeZone: "UTC", cancelledStarts: ["2031-01-08T10:00:00Z"] },
      sequence: 3,
      sendInvites: true,
      changedFields: ["status"],
      previousStatus: "confirmed",
      previousParticipants: ["a@example.com", "x@example.com"],
    };
    expect(plannedDeliveries(event)).toEqual([
      { email: "a@example.com", kind: "cancel" },
      { email: "x@example.com", kind: "cancel" },
    ]);
  });
});
