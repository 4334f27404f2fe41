import { describe, expect, it } from "vitest";
import { slowRequests } from "../stats.js";

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
