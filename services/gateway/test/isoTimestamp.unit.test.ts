import { describe, expect, it } from "vitest";
import { isoTimestamp } from "../src/domain/isoTimestamp.js";

describe("the request log's timestamps", () => {
  it("when times cross seconds, minutes, days and years in any order, then each reads as Date's ISO text", () => {
    const times = [Date.UTC(2026, 10, 26, 11, 25, 7, 3), Date.UTC(2026, 11, 31, 23, 59, 59, 999), Date.UTC(2027, 0, 1, 0, 0, 0, 0), 0, Date.UTC(2026, 10, 26, 11, 25, 7, 45)];
    // About two minutes apart, never a whole number of seconds: three days of every second and millisecond shape.
    for (let i = 0; i < 2_000; i++) times.push(Date.UTC(2026, 10, 26) + i * 130_003);
    for (const ms of times) expect(isoTimestamp(ms)).toBe(new Date(ms).toISOString());
  });
});
