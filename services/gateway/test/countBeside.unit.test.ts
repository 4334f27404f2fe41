import { describe, expect, it } from "vitest";
import { LAST_COUNT_FRESH_MS, marginBelow, mayCountBeside, type LastCount } from "../src/domain/countBeside.js";

const NOW = 1_700_000_000_000;
const ADDRESS = "203.0.113.7";
const last = (overrides: Partial<LastCount> = {}): LastCount => ({
  consumed: 10,
  windowEndsAtMs: NOW + 30_000,
  countedAtMs: NOW - 5,
  address: ADDRESS,
  addressHadFailures: false,
  ...overrides,
});

describe("whether a read is counted beside its forwarding", () => {
  it("is, when a GET's key was counted a moment ago from the same address, well below its limit", () => {
    expect(mayCountBeside("GET", last(), 100, ADDRESS, NOW)).toBe(true);
  });

  it("is not for a write, nor a HEAD, whatever the count", () => {
    for (const method of ["POST", "PATCH", "DELETE", "HEAD"]) expect(mayCountBeside(method, last(), 100, ADDRESS, NOW), method).toBe(false);
  });

  it("is not for a key never counted here", () => {
    expect(mayCountBeside("GET", undefined, 100, ADDRESS, NOW)).toBe(false);
  });

  it("is not when the key is within the margin of its limit, or past it", () => {
    expect(marginBelow(100)).toBe(20);
    expect(mayCountBeside("GET", last({ consumed: 80 }), 100, ADDRESS, NOW)).toBe(true);
    expect(mayCountBeside("GET", last({ consumed: 81 }), 100, ADDRESS, NOW)).toBe(false);
    expect(mayCountBeside("GET", last({ consumed: 100 }), 100, ADDRESS, NOW)).toBe(false);
    expect(mayCountBeside("GET", last({ consumed: 150 }), 100, ADDRESS, NOW)).toBe(false);
  });

  it("keeps a floor of requests for small limits and a fifth of large ones", () => {
    expect(marginBelow(8)).toBe(20);
    // A limit of 8 never leaves 20 below it: every read of such a key waits for its count.
    expect(mayCountBeside("GET", last({ consumed: 0 }), 8, ADDRESS, NOW)).toBe(false);
    expect(marginBelow(1_000_000)).toBe(200_000);
    expect(mayCountBeside("GET", last({ consumed: 800_000 }), 1_000_000, ADDRESS, NOW)).toBe(true);
    expect(mayCountBeside("GET", last({ consumed: 800_001 }), 1_000_000, ADDRESS, NOW)).toBe(false);
  });

  it("is not when the count is older than it may be", () => {
    expect(mayCountBeside("GET", last({ countedAtMs: NOW - LAST_COUNT_FRESH_MS }), 100, ADDRESS, NOW)).toBe(true);
    expect(mayCountBeside("GET", last({ countedAtMs: NOW - LAST_COUNT_FRESH_MS - 1 }), 100, ADDRESS, NOW)).toBe(false);
  });

  it("is not once the counted window has ended", () => {
    expect(mayCountBeside("GET", last({ windowEndsAtMs: NOW }), 100, ADDRESS, NOW)).toBe(false);
    expect(mayCountBeside("GET", last({ windowEndsAtMs: NOW + 1 }), 100, ADDRESS, NOW)).toBe(true);
  });

  it("is not from another address, nor from one that had failed authentications", () => {
    expect(mayCountBeside("GET", last(), 100, "198.51.100.9", NOW)).toBe(false);
    expect(mayCountBeside("GET", last({ addressHadFailures: true }), 100, ADDRESS, NOW)).toBe(false);
  });

  it("applies the key's limit now, not the one it was counted under", () => {
    // 50 counted: well below 100, but a limit lowered to 60 leaves 10, within the margin.
    expect(mayCountBeside("GET", last({ consumed: 50 }), 100, ADDRESS, NOW)).toBe(true);
    expect(mayCountBeside("GET", last({ consumed: 50 }), 60, ADDRESS, NOW)).toBe(false);
  });
});
