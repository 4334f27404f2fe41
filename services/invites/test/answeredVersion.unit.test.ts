import { describe, expect, it } from "vitest";
import { answerResetOf, answersPresentTime } from "../src/domain/answeredVersion.js";

const meetingId = "mtg_4kQ9sVnB2xR7tLmP0aZcY8dE";
const updated = (changedFields: Parameters<typeof answerResetOf>[0]["changedFields"], mode: "live" | "test" = "live", sequence = 3) => ({ meetingId, mode, sequence, changedFields });

describe("which version of a meeting an answer is to", () => {
  it("marks a live change of time or length as asking everyone again, from its sequence", () => {
    expect(answerResetOf(updated(["startTime"]))).toEqual({ meetingId, sequence: 3 });
    expect(answerResetOf(updated(["title", "duration"], "live", 5))).toEqual({ meetingId, sequence: 5 });
    expect(answerResetOf(updated(["title", "participants", "description"]))).toBeUndefined();
    expect(answerResetOf(updated(["startTime"], "test"))).toBeUndefined();
    expect(answerResetOf({ meetingId, mode: "live", sequence: 1 })).toBeUndefined();
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
