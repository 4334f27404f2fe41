import type { Meeting, MeetingField } from "@sched/proto";
import { describe, expect, it } from "vitest";
import { answerResetOf, answersPresentTime } from "../src/domain/answeredVersion.js";
import type { MeetingEvent } from "../src/domain/plan.js";

const meeting: Meeting = {
  id: "mtg_4kQ9sVnB2xR7tLmP0aZcY8dE",
  title: "Design review",
  description: "",
  startTime: "2031-05-06T07:15:00Z",
  duration: "45 mins",
  participants: ["org@example.com", "ann@example.com"],
  status: "confirmed",
  organizer: "org@example.com",
  createdAt: "2031-05-01T00:00:00Z",
  attendees: [],
  recurrence: null,
  seriesId: null,
  originalStartTime: null,
};

const created = (mode: "live" | "test" = "live", sequence = 1) => ({
  ...{ eventId: "evt_1", meetingId: meeting.id, mode, organizer: { userId: "usr_1", email: "org@example.com" } },
  ...{ meeting, sequence, sendInvites: true, occurredAt: "2031-05-02T00:00:00Z" },
});
const updated = (changedFields: MeetingField[], mode: "live" | "test" = "live", sequence = 3): MeetingEvent => ({
  ...created(mode, sequence),
  ...{ changedFields, previousStatus: "confirmed" as const, previousParticipants: meeting.participants },
});

describe("which version of a meeting an answer is to", () => {
  it("marks a live change of time or length as asking everyone again, from its sequence", () => {
    expect(answerResetOf(updated(["startTime"]))).toEqual({ meetingId: meeting.id, sequence: 3 });
    expect(answerResetOf(updated(["title", "duration"], "live", 5))).toEqual({ meetingId: meeting.id, sequence: 5 });
    expect(answerResetOf(updated(["title", "participants", "description"]))).toBeUndefined();
    expect(answerResetOf(updated(["startTime"], "test"))).toBeUndefined();
    expect(answerResetOf(created())).toBeUndefined();
  });

  it("takes an answer to the present time or a later version, and refuses one to a version before the last new time", () => {
    expect(answersPresentTime(1, undefined)).toBe(true);
    expect(answersPresentTime(0, undefined)).toBe(true);
    expect(answersPresentTime(3, 3)).toBe(true);
    expect(answersPresentTime(4, 3)).toBe(true);
    expect(answersPresentTime(2, 3)).toBe(false);
    // A client that leaves SEQUENCE out answers version 0: before any new time.
    expect(answersPresentTime(0, 2)).toBe(false);
  });
});
