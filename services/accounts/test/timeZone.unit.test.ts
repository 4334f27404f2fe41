import { describe, expect, it } from "vitest";
import { DEFAULT_TIME_ZONE, canonicalTimeZone, isFixedOffset, requireTimeZone } from "../src/domain/timeZone.js";
import { thrown } from "@sched/testing";

describe("time zone names", () => {
  it.each(["UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Pacific/Chatham", "Etc/GMT+2"])("when %s is given, then it is taken as is", (zone) => {
    expect(canonicalTimeZone(zone)).toBe(zone);
  });

  it("when a zone is spelled in another case, then it is spelled canonically", () => {
    expect(canonicalTimeZone("europe/berlin")).toBe("Europe/Berlin");
    expect(canonicalTimeZone("utc")).toBe("UTC");
  });

  it("when a zone is an IANA link, then it is kept as given", () => {
    expect(canonicalTimeZone("US/Pacific")).toBe("US/Pacific");
  });

  it.each(["UTC+2", "UTC+02:00", "GMT-5", "+02:00", "-0500", "+2"])("when %s, a fixed offset, is given, then it is refused", (zone) => {
    expect(canonicalTimeZone(zone)).toBeUndefined();
  });

  it("offsets are told from zone names whatever the runtime's time zone data accepts", () => {
    for (const offset of ["UTC+2", "utc-03:30", "GMT+0", "+02:00", "-0500", "+ 2"]) expect(isFixedOffset(offset), offset).toBe(true);
    for (const zone of ["UTC", "GMT", "Etc/GMT+2", "Europe/Berlin", "America/Port-au-Prince"]) expect(isFixedOffset(zone), zone).toBe(false);
  });

  it.each(["", "Mars/Olympus", "Berlin", "Europe/Berlin ", " UTC", "Z", "Europe\\Berlin"])("when %j is given, then it is refused", (zone) => {
    expect(canonicalTimeZone(zone)).toBeUndefined();
  });

  it("when a zone is refused, then the 400 names the parameter", () => {
    const err = thrown(() => requireTimeZone("UTC+2"));
    expect(err).toMatchObject({ code: "invalid_request", status: 400 });
    expect(err.details.param).toBe("timezone");
    expect(err.message).toContain("timezone");
  });

  it("the default zone is UTC, and valid", () => {
    expect(DEFAULT_TIME_ZONE).toBe("UTC");
    expect(requireTimeZone(DEFAULT_TIME_ZONE)).toBe("UTC");
  });
});
