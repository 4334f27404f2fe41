import { describe, expect, it } from "vitest";
import { slowDuringPauses, slowRequests } from "../stats.js";

describe("slowRequests", () => {
  it("When the slow requests were sent close together, then they count in few windows", () => {
    // Requests 3, 4 and 5 in the first window of 10; 12 in the second.
    const latencies = [1, 2, 1, 30, 25, 11, 1, 1, 1, 1, 1, 2, 40, 1];
    expect(slowRequests(latencies, 10, 10)).toEqual({ count: 4, windows: 2 });
  });

  it("When a request takes exactly the threshold, then it is not slow", () => {
    expect(slowRequests([10, 10.01, 9.99], 10, 1)).toEqual({ count: 1, windows: 1 });
  });

  it("When nothing is slow, then there are no windows", () => {
    expect(slowRequests([1, 2, 3], 10, 20)).toEqual({ count: 0, windows: 0 });
  });
});

describe("slowDuringPauses", () => {
  // Sent every 5 ms; the driver paused over [12, 20].
  const sentAt = [0, 5, 10, 15, 20, 25];
  const pauses: Array<[number, number]> = [[12, 20]];

  it("When a slow request was in flight during a pause of the driver, then it counts", () => {
    // Request 0 (0–11) ends before the pause; 1 (5–17) and 3 (15–27) overlap it; 5 (25–40) comes after.
    expect(slowDuringPauses([11, 12, 1, 12, 1, 15], sentAt, pauses, 10)).toBe(2);
  });

  it("When a request overlapping a pause was not slow, then it does not count", () => {
    expect(slowDuringPauses([1, 1, 8, 1, 1, 1], sentAt, pauses, 10)).toBe(0);
  });

  it("When a slow request only touches a pause's end, then it does not count", () => {
    expect(slowDuringPauses([1, 1, 1, 1, 11, 1], sentAt, pauses, 10)).toBe(0);
  });
});
