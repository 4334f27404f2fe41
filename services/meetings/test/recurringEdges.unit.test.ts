import { describe, expect, it } from "vitest";
import { occurrenceAccess, seriesAccess } from "../src/domain/series.js";
import { seriesLastEnd } from "../src/domain/seriesChanges.js";

const at = (iso: string) => new Date(iso);
const series = { mode: "test" as const, organizerId: "usr_org", participants: ["bea@example.com"] };
const caller = (userId: string, email: string, mode: "test" | "live" = "test") => ({ userId, email, mode });

describe("who may see and change a series and its occurrences", () => {
  it("someone on one occurrence alone is a participant of that occurrence and of the series, never the organizer", () => {
    const guest = caller("usr_guest", "Guest@Example.com");
    expect(occurrenceAccess(series, { participants: ["bea@example.com", "guest@example.com"] }, guest)).toBe("participant");
    expect(occurrenceAccess(series, { participants: ["bea@example.com"] }, guest)).toBe("none");
    expect(seriesAccess(series, guest)).toBe("none");
    expect(seriesAccess(series, guest, true)).toBe("participant");
    expect(seriesAccess(series, caller("usr_guest", "guest@example.com", "live"), true)).toBe("none");
  });

  it("a series participant left out of one occurrence does not see that one; the organizer always does", () => {
    expect(occurrenceAccess(series, { participants: ["cal@example.com"] }, caller("usr_bea", "bea@example.com"))).toBe("none");
    expect(occurrenceAccess(series, { participants: [] }, caller("usr_org", "org@example.com"))).toBe("organizer");
    expect(occurrenceAccess(series, { participants: [] }, caller("usr_org", "org@example.com", "live"))).toBe("none");
  });
});

describe("the series' range", () => {
  const weekly = { recurrence: "FREQ=WEEKLY;COUNT=3", startTime: at("2032-06-07T09:00:00Z"), timeZone: "UTC", duration: "30 mins" as const };

  it("ends with the rule's last occurrence, or with an exception moved past it", () => {
    expect(seriesLastEnd(weekly, null)).toEqual(at("2032-06-21T09:30:00Z"));
    expect(seriesLastEnd(weekly, at("2032-06-14T10:00:00Z"))).toEqual(at("2032-06-21T09:30:00Z"));
    expect(seriesLastEnd(weekly, at("2032-07-05T15:30:00Z"))).toEqual(at("2032-07-05T15:30:00Z"));
  });

  it("follows a new duration of the rule's occurrences", () => {
    expect(seriesLastEnd({ ...weekly, duration: "2 hours" }, null)).toEqual(at("2032-06-21T11:00:00Z"));
  });
});
