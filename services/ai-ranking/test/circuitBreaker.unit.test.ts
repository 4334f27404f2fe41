import { describe, expect, it } from "vitest";
import { CircuitBreaker } from "../src/domain/circuitBreaker.js";

describe("CircuitBreaker", () => {
  it("opens after the threshold of failures in a row, lets one trial through after the pause, and closes on its success", () => {
    let now = 0;
    const breaker = new CircuitBreaker(3, 1_000, () => now);
    breaker.failed();
    breaker.failed();
    breaker.succeeded();
    breaker.failed();
    breaker.failed();
    expect(breaker.allow()).toBe(true);
    breaker.failed();
    expect(breaker.state).toBe("open");
    expect(breaker.allow()).toBe(false);
    now = 1_000;
    expect(breaker.state).toBe("half-open");
    expect(breaker.allow()).toBe(true);
    // Only one trial at a time.
    expect(breaker.allow()).toBe(false);
    breaker.failed();
    expect(breaker.allow()).toBe(false);
    now = 2_000;
    expect(breaker.allow()).toBe(true);
    breaker.succeeded();
    expect(breaker.state).toBe("closed");
    expect(breaker.allow()).toBe(true);
  });
});
