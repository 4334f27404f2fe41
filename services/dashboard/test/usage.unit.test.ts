import { describe, expect, it } from "vitest";
import { logHorizon, usageSince } from "../src/domain/requestLog.js";

describe("usage per UTC day", () => {
  it("when the log's horizon falls inside a day, then counting starts at the next UTC midnight, so no day is shown in part", () => {
    expect(usageSince(new Date("2026-05-11T18:30:00Z")).toISOString()).toBe("2026-05-05T00:00:00.000Z");
  });

  it("when the horizon is a UTC midnight, then that whole day counts", () => {
    expect(usageSince(new Date("2026-05-11T00:00:00Z")).toISOString()).toBe("2026-05-04T00:00:00.000Z");
  });

  it("whatever the time, the days counted are the log's: never earlier than its horizon, and seven with today", () => {
    for (const now of ["2026-05-11T00:00:01Z", "2026-05-11T23:59:59Z", "2026-03-29T01:30:00Z"].map((t) => new Date(t))) {
      const since = usageSince(now);
      expect(since.getTime()).toBeGreaterThanOrEqual(logHorizon(now).getTime());
      expect(since.getUTCHours() + since.getUTCMinutes() + since.getUTCSeconds()).toBe(0);
    }
  });
});
