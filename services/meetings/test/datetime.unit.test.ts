import { AppError } from "@sched/errors";
import { describe, expect, it } from "vitest";
import { parseDateTime, readDateTime } from "../src/domain/datetime.js";
import { endTimeOf, formatTimestamp, hasEnded, truncateToSecond } from "../src/domain/timing.js";

const utc = (input: string, zone = "UTC") => {
  const r = parseDateTime(input, zone);
  return r.ok ? formatTimestamp(r.value) : `refused: ${r.problem}`;
};

describe("parseDateTime", () => {
  it("reads a UTC datetime with or without seconds", () => {
    expect(utc("2026-05-04T09:30:00Z")).toBe("2026-05-04T09:30:00Z");
    expect(utc("2026-05-04T09:30Z")).toBe("2026-05-04T09:30:00Z");
  });

  it("applies an explicit offset and ignores the caller's zone then", () => {
    expect(utc("2026-05-04T09:30:00+02:00", "America/New_York")).toBe("2026-05-04T07:30:00Z");
    expect(utc("2026-05-04T09:30:00-0530", "Asia/Tokyo")).toBe("2026-05-04T15:00:00Z");
    expect(utc("2026-05-04T09:30:00+05", "UTC")).toBe("2026-05-04T04:30:00Z");
  });

  it("reads a datetime without offset in the caller's time zone, with daylight saving", () => {
    expect(utc("2026-01-15T09:00", "Europe/Berlin")).toBe("2026-01-15T08:00:00Z");
    expect(utc("2026-07-15T09:00:00", "Europe/Berlin")).toBe("2026-07-15T07:00:00Z");
    expect(utc("2026-07-15T09:00:00", "America/Los_Angeles")).toBe("2026-07-15T16:00:00Z");
  });

  it("drops fractions of a second instead of rounding", () => {
    expect(utc("2026-05-04T09:30:59.999Z")).toBe("2026-05-04T09:30:59Z");
    expect(utc("2026-05-04T09:30:59,5+01:00")).toBe("2026-05-04T08:30:59Z");
  });

  it.each(["2026-02-30T10:00:00Z", "2026-02-29T10:00:00Z", "2026-13-01T10:00:00Z", "2026-00-10T10:00:00Z", "2026-04-31T10:00Z", "2026-01-00T10:00Z"])(
    "refuses the date that does not exist in %s",
    (input) => {
      expect(utc(input)).toBe("refused: is not a date that exists");
    },
  );

  it("accepts 29 February in a leap year only", () => {
    expect(utc("2028-02-29T10:00:00Z")).toBe("2028-02-29T10:00:00Z");
    expect(utc("2100-02-29T10:00:00Z")).toMatch(/^refused/);
  });

  it.each(["2026-01-01T24:00:00Z", "2026-01-01T24:00", "2026-01-01T10:60Z", "2026-01-01T23:59:60Z"])("refuses the time of day that does not exist in %s", (input) => {
    expect(utc(input)).toBe("refused: is not a time of day that exists");
  });

  it("refuses a wall-clock time skipped by a daylight-saving change", () => {
    expect(utc("2026-03-29T02:30", "Europe/Berlin")).toMatch(/does not exist in time zone Europe\/Berlin/);
    expect(utc("2026-03-29T02:30Z", "Europe/Berlin")).toBe("2026-03-29T02:30:00Z");
  });

  it("takes the earlier reading of a wall-clock time that occurs twice", () => {
    expect(utc("2026-10-25T02:30", "Europe/Berlin")).toBe("2026-10-25T00:30:00Z");
  });

  it.each(["2026-05-04", "2026-05-04 09:30:00Z", "2026-5-4T09:30Z", "tomorrow", "", "2026-05-04T09:30:00ZZ", "20260504T093000Z", "2026-05-04T09Z"])(
    "refuses %j, which is not an extended ISO 8601 datetime",
    (input) => {
      expect(utc(input)).toMatch(/^refused: must be an ISO 8601 datetime/);
    },
  );

  it("refuses offsets beyond ±18:00 and minutes beyond 59", () => {
    expect(utc("2026-05-04T09:30:00+19:00")).toBe("refused: has an offset out of range");
    expect(utc("2026-05-04T09:30:00+01:75")).toBe("refused: has an offset out of range");
  });

  it("reads a naive time as UTC when the caller's zone is unknown", () => {
    expect(utc("2026-05-04T09:30", "Not/AZone")).toBe("2026-05-04T09:30:00Z");
  });
});

describe("readDateTime", () => {
  it("fails with 400 invalid_request naming the field", () => {
    let error: unknown;
    try {
      readDateTime("2026-02-30T10:00Z", "UTC", "startTime");
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: "invalid_request", status: 400, details: { param: "startTime" } });
    expect((error as AppError).message).toContain("startTime");
  });
});

describe("timing", () => {
  const start = new Date("2026-05-04T09:00:00Z");

  it("ends a meeting after its duration", () => {
    expect(endTimeOf(start, "15 mins").toISOString()).toBe("2026-05-04T09:15:00.000Z");
    expect(endTimeOf(start, "1.5 hours").toISOString()).toBe("2026-05-04T10:30:00.000Z");
    expect(endTimeOf(start, "2 hours").toISOString()).toBe("2026-05-04T11:00:00.000Z");
  });

  it("has ended when its end is not after now", () => {
    const meeting = { startTime: start, duration: "1 hour" as const };
    expect(hasEnded(meeting, new Date("2026-05-04T09:59:59Z"))).toBe(false);
    expect(hasEnded(meeting, new Date("2026-05-04T10:00:00Z"))).toBe(true);
    expect(hasEnded(meeting, new Date("2026-05-04T08:00:00Z"))).toBe(false);
  });

  it("formats with whole seconds in UTC and truncates", () => {
    expect(formatTimestamp(new Date("2026-05-04T09:00:00.987Z"))).toBe("2026-05-04T09:00:00Z");
    expect(truncateToSecond(new Date("2026-05-04T09:00:00.987Z")).toISOString()).toBe("2026-05-04T09:00:00.000Z");
  });
});
