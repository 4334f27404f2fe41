import { describe, expect, it } from "vitest";
import { disablesEndpoint, isDelivered, nextAttemptAt } from "../src/domain/retry.js";

const policy = { baseMs: 1_000, maxDelayMs: 60_000, windowMs: 3_600_000 };

describe("retry schedule", () => {
  it("doubles the wait from the base, with up to half of it random", () => {
    expect(nextAttemptAt(1, 0, 0, policy, () => 0)).toBe(500);
    expect(nextAttemptAt(1, 0, 0, policy, () => 1)).toBe(1_000);
    expect(nextAttemptAt(3, 0, 0, policy, () => 1)).toBe(4_000);
    expect(nextAttemptAt(3, 0, 0, policy, () => 0)).toBe(2_000);
  });

  it("caps a single wait", () => {
    expect(nextAttemptAt(30, 0, 0, policy, () => 1)).toBe(60_000);
  });

  it("gives up once the next attempt would fall past the window", () => {
    expect(nextAttemptAt(5, 0, 3_600_000 - 100_000, policy, () => 1)).not.toBeNull();
    expect(nextAttemptAt(5, 0, 3_600_000 - 1_000, policy, () => 1)).toBeNull();
  });

  it("disables an endpoint only when nothing reached it since the failed delivery was queued", () => {
    expect(disablesEndpoint(null, 1_000, 0)).toBe(true);
    expect(disablesEndpoint(500, 1_000, 0)).toBe(true);
    expect(disablesEndpoint(2_000, 1_000, 0)).toBe(false);
  });

  it("disables only when the recorded last success, however stale within its grain, is older than the delivery", () => {
    // A success up to the grain after the recorded one may have gone unrecorded: it could be after the delivery was queued.
    expect(disablesEndpoint(500, 1_000, 400)).toBe(true);
    expect(disablesEndpoint(700, 1_000, 400)).toBe(false);
    expect(disablesEndpoint(null, 1_000, 400)).toBe(true);
  });

  it("counts any 2xx as delivered", () => {
    expect([200, 204, 299].every(isDelivered)).toBe(true);
    expect([null, 199, 301, 400, 500].some(isDelivered)).toBe(false);
  });
});
