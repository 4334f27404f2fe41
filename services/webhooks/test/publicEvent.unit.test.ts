import type { Meeting } from "@sched/proto";
import { describe, expect, it } from "vitest";
import { publicEventOf, subscribes, type MeetingChange } from "../src/domain/publicEvent.js";

const meeting: Meeting = {
  id: "mtg_4kQ9sVnB2xR7tLmP0aZcY8dE",
  title: "Plan B",
  description: "",
  startTime: "2031-05-04T10:00:00Z",
  duration: "1 hour",
  participants: ["b@example.com"],
  status: "confirmed",
  organizer: "ann@example.com",
  createdAt: "2031-05-01T10:00:00Z",
  attendees: [{ email: "b@example.com", response: "accepted", respondedAt: "2031-05-02T08:00:00Z" }],
};
const before: Meeting = {
  ...meeting,
  title: "Plan",
  startTime: "2031-05-04T09:00:00Z",
  participants: ["a@example.com"],
  attendees: [{ email: "a@example.com", response: "needsAction", respondedAt: null }],
};

describe("public events", () => {
  it("makes a created event with the meeting and no previous values", () => {
    const change: MeetingChange = { eventId: "e1", kind: "meeting.created", mode: "test", meeting, occurredAt: "2031-05-01T10:00:00Z" };
    expect(publicEventOf(change, "evt_1", undefined)).toEqual({ id: "evt_1", type: "meeting.created", createdAt: "2031-05-01T10:00:00Z", mode: "test", data: { object: meeting } });
  });

  it("gives an update the earlier values of exactly the changed fields", () => {
    const change: MeetingChange = {
      eventId: "e2",
      kind: "meeting.updated",
      mode: "live",
      meeting,
      occurredAt: "2031-05-02T10:00:00Z",
      changedFields: ["title", "startTime", "participants"],
      previousStatus: "confirmed",
      previousParticipants: ["a@example.com"],
    };
    expect(publicEventOf(change, "evt_2", before).data.previous).toEqual({ title: "Plan", startTime: "2031-05-04T09:00:00Z", participants: ["a@example.com"] });
  });

  it("tells what the event carries even without the earlier state", () => {
    const change: MeetingChange = { eventId: "e3", kind: "meeting.cancelled", mode: "test", meeting: { ...meeting, status: "cancelled" }, occurredAt: "2031-05-02T10:00:00Z", changedFields: ["status", "title"], previousStatus: "draft", previousParticipants: [] };
    expect(publicEventOf(change, "evt_3", undefined).data.previous).toEqual({ status: "draft" });
  });

  it("subscribes by type or to everything", () => {
    expect(subscribes(["*"], "meeting.deleted")).toBe(true);
    expect(subscribes(["meeting.created"], "meeting.created")).toBe(true);
    expect(subscribes(["meeting.created"], "meeting.updated")).toBe(false);
  });
});
