import { describe, expect, it } from "vitest";
import { attemptStats, type Attempt } from "../domain/attempts.js";

const FAULT_AT = 10_000;
const at = (sentAt: number, tookMs: number, answer: Attempt["answer"], retryAfter?: string): Attempt => ({ sentAt, answeredAt: sentAt + tookMs, answer, ...(retryAfter ? { retryAfter } : {}) });
const stats = (attempts: Attempt[]) => attemptStats(attempts, { faultAt: FAULT_AT, hangBoundMs: 7_000 });

describe("attemptStats", () => {
  it("counts answers by status, the longest answer and the requests", () => {
    const s = stats([at(9_000, 40, 201), at(10_100, 5_010, 503, "1"), at(10_200, 30, 201), at(10_300, 2, "connection")]);
    expect(s.requests).toBe(4);
    expect(s.answers).toEqual({ "201": 2, "503": 1, connection: 1 });
    expect(s.longestMs).toBe(5_010);
  });

  it("counts as hangs the answers past the bound and the client's own timeouts", () => {
    const s = stats([at(10_000, 7_000, 503, "1"), at(10_000, 7_001, 201), at(10_000, 17_000, "timeout")]);
    expect(s.hangs).toBe(2);
    expect(s.hangAnswers).toEqual({ "201": 1, timeout: 1 });
  });

  it("counts 5xx other than 503, and 503s that do not say when to come back", () => {
    const s = stats([at(10_000, 5, 500), at(10_000, 5, 502), at(10_000, 5, 503), at(10_000, 5, 503, "2"), at(10_000, 5, 409)]);
    expect(s.serverErrors).toBe(2);
    expect(s.unavailableWithoutRetryAfter).toBe(1);
  });

  it("measures recovery from the fault to the last failed answer, whatever came between", () => {
    const s = stats([at(10_500, 100, 503, "1"), at(11_000, 10, 201), at(14_000, 1_000, 409, "1"), at(16_000, 10, 201)]);
    expect(s.recoveryMs).toBe(5_000);
  });

  it("gives no recovery time when the clients saw no failure after the fault", () => {
    expect(stats([at(9_000, 10, 503, "1"), at(10_500, 10, 201)]).recoveryMs).toBe(0);
    expect(stats([]).recoveryMs).toBe(0);
  });
});
