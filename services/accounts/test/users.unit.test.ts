import { describe, expect, it } from "vitest";
import { adminUserView, effectiveChanges, formatTimestamp, normalizeEmail, profileView, type StoredUser } from "../src/domain/users.js";
import { NO_PREFERENCES } from "@sched/proto";

const user: StoredUser = {
  id: "usr_0123456789abcdefghijklmn",
  email: "ann@example.com",
  name: "Ann",
  timezone: "Europe/Berlin",
  preferences: NO_PREFERENCES,
  workingHours: [{ day: "monday", start: "09:00", end: "17:00" }],
  createdAt: new Date("2026-03-04T05:06:07.890Z"),
  updatedAt: new Date("2026-03-05T05:06:07.000Z"),
};

describe("users", () => {
  it("timestamps are UTC with whole seconds", () => {
    expect(formatTimestamp(new Date("2026-03-04T05:06:07.999Z"))).toBe("2026-03-04T05:06:07Z");
  });

  it("e-mails are trimmed and lower-cased", () => {
    expect(normalizeEmail("  Ann@Example.COM ")).toBe("ann@example.com");
  });

  it("the profile and the admin view show what the API documents", () => {
    expect(profileView(user)).toEqual({ id: user.id, email: user.email, name: "Ann", timezone: "Europe/Berlin", workingHours: user.workingHours, preferences: NO_PREFERENCES });
    expect(adminUserView(user)).toEqual({ id: user.id, email: user.email, name: "Ann", timezone: "Europe/Berlin", createdAt: "2026-03-04T05:06:07Z" });
  });

  it("when nothing differs from what is stored, then there is no change", () => {
    expect(effectiveChanges(user, {})).toEqual({});
    expect(effectiveChanges(user, { name: "Ann", timezone: "Europe/Berlin", workingHours: [{ day: "monday", start: "09:00", end: "17:00" }] })).toEqual({});
  });

  it("when fields differ, then only those change", () => {
    expect(effectiveChanges(user, { name: "Ann", timezone: "UTC" })).toEqual({ timezone: "UTC" });
    expect(effectiveChanges(user, { workingHours: [] })).toEqual({ workingHours: [] });
    expect(effectiveChanges(user, { workingHours: [{ day: "monday", start: "09:00", end: "16:00" }] })).toEqual({
      workingHours: [{ day: "monday", start: "09:00", end: "16:00" }],
    });
  });
});
