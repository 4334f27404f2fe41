import { describe, expect, it } from "vitest";
import { RENEW_MARGIN_MS, watchStep } from "../src/domain/watchRenewal.js";

const now = Date.parse("2026-11-26T10:00:00Z");
const at = (msFromNow: number) => new Date(now + msFromNow);

describe("when a push channel is opened or renewed", () => {
  it("opens a channel never opened, or one that has lapsed", () => {
    expect(watchStep(null, now, 60_000)).toBe("open");
    expect(watchStep(at(0), now, 60_000)).toBe("open");
    expect(watchStep(at(-1), now, 60_000)).toBe("open");
  });

  it("renews a channel within the margin of lapsing", () => {
    expect(watchStep(at(RENEW_MARGIN_MS), now, 60_000)).toBe("renew");
    expect(watchStep(at(RENEW_MARGIN_MS + 1), now, 60_000)).toBe("keep");
  });

  it("renews a channel that would lapse before the check after next, when checks are further apart than the margin", () => {
    const checkMs = 3 * RENEW_MARGIN_MS;
    expect(watchStep(at(2 * checkMs), now, checkMs)).toBe("renew");
    expect(watchStep(at(2 * checkMs + 1), now, checkMs)).toBe("keep");
  });

  it("keeps a channel far from lapsing", () => {
    expect(watchStep(at(7 * 86_400_000), now, 60_000)).toBe("keep");
  });
});
