import { describe, expect, it } from "vitest";
import type { MeetingRecord } from "../src/domain/meeting.js";
import { judgeResponse, responsesAfterChange } from "../src/domain/responses.js";

const at = (iso: string) => new Date(iso);

const meeting = (overrides: Partial<MeetingRecord> = {}): MeetingRecord => ({
  id: "mtg_aaaaaaaaaaaaaaaaaaaaaaaa",
  mode: "live",
  organizerId: "usr_org",
  organizerEmail: "org@example.com",
  title: "Planning",
  description: "",
  startTime: at("2031-05-05T09:00:00Z"),
  duration: "30 mins",
  participants: ["a@example.com", "b@example.com"],
  status: "confirmed",
  sequence: 1,
  createdAt: at("2031-05-01T08:00:00Z"),
  responses: {},
  ...overrides,
});

const reply = (overrides: Partial<Parameters<typeof judgeResponse>[1]> = {}) => ({
  organizerEmail: "org@example.com",
  email: "a@example.com",
  response: "accepted" as const,
  respondedAt: at("2031-05-02T10:00:00Z"),
  ...overrides,
});

describe("which answers apply", () => {
  it("applies a participant's first answer, whatever the case of the addresses", () => {
    expect(judgeResponse(meeting(), reply({ email: "A@Example.com", organizerEmail: "Org@Example.com" }))).toBe("applied");
  });

  it("refuses answers for no meeting, a cancelled one, a non-participant or another organizer", () => {
    expect(judgeResponse(undefined, reply())).toBe("unknown_meeting");
    expect(judgeResponse(meeting({ status: "cancelled" }), reply())).toBe("cancelled");
    expect(judgeResponse(meeting(), reply({ email: "mallory@example.com" }))).toBe("not_attendee");
    expect(judgeResponse(meeting(), reply({ organizerEmail: "mallory@example.com" }))).toBe("wrong_organizer");
  });

  it("keeps the newest answer: an older one is stale, the same one again changes nothing, a newer other one applies", () => {
    const answered = meeting({ responses: { "a@example.com": { response: "accepted", respondedAt: at("2031-05-02T10:00:00Z") } } });
    expect(judgeResponse(answered, reply({ response: "declined", respondedAt: at("2031-05-02T09:59:59Z") }))).toBe("stale");
    expect(judgeResponse(answered, reply({ respondedAt: at("2031-05-02T11:00:00Z") }))).toBe("unchanged");
    expect(judgeResponse(answered, reply({ response: "declined", respondedAt: at("2031-05-02T10:00:00Z") }))).toBe("applied");
  });
});

describe("answers after a change", () => {
  const answers = {
    "a@example.com": { response: "accepted" as const, respondedAt: at("2031-05-02T10:00:00Z") },
    "b@example.com": { response: "declined" as const, respondedAt: at("2031-05-02T10:00:00Z") },
  };

  it("keeps the answers of those still invited when the time stays", () => {
    expect(responsesAfterChange(answers, ["a@example.com", "c@example.com"], ["participants", "title"])).toEqual({ "a@example.com": answers["a@example.com"] });
  });

  it("asks everyone again when the time or the length changes", () => {
    expect(responsesAfterChange(answers, ["a@example.com", "b@example.com"], ["startTime"])).toEqual({});
    expect(responsesAfterChange(answers, ["a@example.com", "b@example.com"], ["duration"])).toEqual({});
  });
});
