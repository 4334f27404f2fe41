import { describe, expect, it } from "vitest";
import { findings, type FaultResult } from "../domain/findings.js";

const survived: FaultResult = {
  fault: "postgres",
  faultMs: 800,
  loadAverage: 1.5,
  requests: { requests: 10, answers: { "201": 8, "503": 2 }, longestMs: 5_000, hangs: 0, hangAnswers: {}, serverErrors: 0, unavailableWithoutRetryAfter: 0, recoveryMs: 3_000 },
  writes: { creates: { accepted: 7, unknown: 1, refused: 0 }, updates: { accepted: 1, unknown: 0, refused: 0 }, unknownButWritten: 1, lost: [], doubled: [], phantom: [], lostUpdates: [], phantomUpdates: [] },
  invites: { owed: 18, deliveredOnce: 18, lost: 0, doubled: 0, doubledSameMessageId: 0, unowed: 0, unreadable: 0 },
};

describe("findings", () => {
  it("finds nothing in 503s, unknown verdicts and a slow recovery", () => {
    expect(findings(survived)).toEqual([]);
  });

  it("names each problem with its count", () => {
    const broken: FaultResult = {
      ...survived,
      requests: { ...survived.requests, serverErrors: 15, hangs: 2, hangAnswers: { "503": 2 }, unavailableWithoutRetryAfter: 1 },
      writes: { ...survived.writes, lost: ["k1"], doubled: ["k2", "k3"], phantom: ["k4"], lostUpdates: ["m1"], phantomUpdates: ["m2"] },
      invites: { ...survived.invites, lost: 3, doubled: 5, doubledSameMessageId: 5, unowed: 1, unreadable: 1 },
    };
    expect(findings(broken)).toEqual([
      "15 5xx other than 503",
      "2 hung requests (503×2)",
      "1 503 without Retry-After",
      "1 lost creates",
      "2 doubled creates",
      "1 creates refused yet written",
      "1 lost updates",
      "1 updates refused yet written",
      "3 lost invites",
      "5 doubled invites",
      "1 invites not owed",
      "1 e-mails without a readable invite",
    ]);
  });
});
