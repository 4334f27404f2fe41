import { PublicEvent, type Meeting } from "@sched/proto";
import { describe, expect, it } from "vitest";
import { awaitsMeetingEvent, inviteEventOf, MEETING_EVENT_GRACE_MS, meetingIdOf, publicEventOf, responseEventOf, subscribes, type InviteSettlement, type MeetingChange, type ResponseChange } from "../src/domain/publicEvent.js";

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
  recurrence: null, seriesId: null, originalStartTime: null,
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
    expect(meetingIdOf(publicEventOf(change, "evt_1", undefined))).toBe(meeting.id);
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

  describe("a participant's answer", () => {
    const answered: ResponseChange = {
      eventId: "e4",
      meetingId: meeting.id,
      mode: "live",
      organizer: { userId: "usr_1", email: "ann@example.com" },
      meeting,
      attendee: { email: "b@example.com", response: "accepted", respondedAt: "2031-05-02T08:00:00Z" },
      previousResponse: "tentative",
      source: "email",
      occurredAt: "2031-05-02T08:00:01Z",
    };

    it("carries the meeting with its attendees, and only the participant who answered as they stood before", () => {
      const earlier: Meeting = { ...meeting, attendees: [{ email: "B@example.com", response: "tentative", respondedAt: "2031-05-01T12:00:00Z" }] };
      const event = responseEventOf(answered, "evt_4", earlier);
      expect(event).toEqual({
        id: "evt_4",
        type: "meeting.response_updated",
        createdAt: "2031-05-02T08:00:01Z",
        mode: "live",
        data: { object: meeting, previous: { attendees: [{ email: "b@example.com", response: "tentative", respondedAt: "2031-05-01T12:00:00Z" }] } },
      });
      expect(PublicEvent.parse(event)).toEqual(event);
    });

    it("leaves the earlier answer's time null when the state seen before does not show that answer", () => {
      const stale: Meeting = { ...meeting, attendees: [{ email: "b@example.com", response: "needsAction", respondedAt: null }] };
      for (const b of [stale, undefined]) expect(responseEventOf(answered, "evt_5", b).data.previous).toEqual({ attendees: [{ email: "b@example.com", response: "tentative", respondedAt: null }] });
    });
  });

  describe("an invite's settlement", () => {
    const settlement: InviteSettlement = {
      kind: "invite.sent",
      eventId: "invite_0123",
      meetingId: meeting.id,
      mode: "live",
      organizer: { userId: "usr_1", email: "ann@example.com" },
      invite: { meetingId: meeting.id, email: "B@example.com", kind: "request", sequence: 2, state: "sent", channel: "email", attempts: 1, lastError: null, updatedAt: "2031-05-02T09:00:00Z" },
      occurredAt: "2031-05-02T09:00:00Z",
    };

    it("carries the invite as the invites list shows it, with the participant's answer from the meeting", () => {
      const event = inviteEventOf(settlement, "evt_6", meeting);
      expect(event).toEqual({
        id: "evt_6",
        type: "invite.sent",
        createdAt: "2031-05-02T09:00:00Z",
        mode: "live",
        data: { object: { ...settlement.invite, response: "accepted", respondedAt: "2031-05-02T08:00:00Z" } },
      });
      expect(Object.keys(event.data.object)).toEqual(["meetingId", "email", "kind", "sequence", "state", "channel", "attempts", "lastError", "updatedAt", "response", "respondedAt"]);
      expect(PublicEvent.parse(event)).toEqual(event);
      expect(meetingIdOf(event)).toBe(meeting.id);
    });

    it("gives a participant no longer on the meeting, or a meeting not seen, no answer; a failure keeps its error", () => {
      const failed: InviteSettlement = { ...settlement, kind: "invite.failed", invite: { ...settlement.invite, state: "failed", lastError: "550 no such user" } };
      for (const m of [{ ...meeting, attendees: [] }, undefined]) {
        const event = inviteEventOf(failed, "evt_7", m);
        expect(event.type).toBe("invite.failed");
        expect(event.data.object).toMatchObject({ state: "failed", lastError: "550 no such user", response: null, respondedAt: null });
      }
    });
  });

  it("holds an invite's settlement for its meeting's first event only within the grace", () => {
    const settledAt = "2031-05-02T09:00:00Z";
    const at = (ms: number) => new Date(Date.parse(settledAt) + ms);
    expect(awaitsMeetingEvent(settledAt, false, at(1_000))).toBe(true);
    expect(awaitsMeetingEvent(settledAt, true, at(1_000))).toBe(false);
    expect(awaitsMeetingEvent(settledAt, false, at(MEETING_EVENT_GRACE_MS))).toBe(false);
  });

  it("subscribes by type or to everything", () => {
    expect(subscribes(["*"], "invite.failed")).toBe(true);
    expect(subscribes(["invite.sent"], "invite.failed")).toBe(false);
    expect(subscribes(["*"], "meeting.deleted")).toBe(true);
    expect(subscribes(["meeting.created"], "meeting.created")).toBe(true);
    expect(subscribes(["meeting.created"], "meeting.updated")).toBe(false);
  });
});
