import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { lingeringWake } from "../src/outbound/lingeringWake.js";

describe("lingeringWake", () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it("wakes the relay once, lingerMs after the first of a burst of wakes", () => {
    const relay = { wake: vi.fn() };
    const lingering = lingeringWake(relay, 5);
    lingering.wake();
    vi.advanceTimersByTime(3);
    lingering.wake();
    lingering.wake();
    expect(relay.wake).not.toHaveBeenCalled();
    vi.advanceTimersByTime(2);
    expect(relay.wake).toHaveBeenCalledTimes(1);
    lingering.wake();
    vi.advanceTimersByTime(5);
    expect(relay.wake).toHaveBeenCalledTimes(2);
  });

  it("when cancelled, then a pending wake never reaches the relay", () => {
    const relay = { wake: vi.fn() };
    const lingering = lingeringWake(relay, 5);
    lingering.wake();
    lingering.cancel();
    vi.advanceTimersByTime(50);
    expect(relay.wake).not.toHaveBeenCalled();
  });
});
