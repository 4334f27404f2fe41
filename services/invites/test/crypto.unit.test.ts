import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { TokenCipher } from "../src/domain/tokenCipher.js";
import { failureKindOfStatus, isLastAttempt, retryDelayMs } from "../src/domain/retry.js";

describe("TokenCipher", () => {
  const cipher = new TokenCipher(randomBytes(32));
  const tokens = { accessToken: "ya29.secret", refreshToken: "1//refresh", expiresAt: 1_900_000_000_000 };

  it("opens what it sealed, and the sealed form shows nothing of the tokens", () => {
    const sealed = cipher.seal(tokens, "cal_1");
    expect(sealed).not.toContain("secret");
    expect(sealed).not.toContain("refresh");
    expect(cipher.open(sealed, "cal_1")).toEqual(tokens);
    expect(cipher.seal(tokens, "cal_1")).not.toBe(sealed);
  });

  it("refuses tokens moved to another connection, altered, or sealed under another key", () => {
    const sealed = cipher.seal(tokens, "cal_1");
    expect(() => cipher.open(sealed, "cal_2")).toThrow();
    const [v, iv, body] = sealed.split(".");
    const flipped = Buffer.from(body!, "base64");
    flipped[0]! ^= 1;
    expect(() => cipher.open([v, iv, flipped.toString("base64")].join("."), "cal_1")).toThrow();
    expect(() => new TokenCipher(randomBytes(32)).open(sealed, "cal_1")).toThrow();
    expect(() => new TokenCipher(randomBytes(16))).toThrow(/32 bytes/);
  });
});

describe("retry policy", () => {
  it("doubles the wait from the base, capped, with at most a quarter of jitter off", () => {
    expect(retryDelayMs(1, 1_000, () => 0)).toBe(1_000);
    expect(retryDelayMs(3, 1_000, () => 0)).toBe(4_000);
    expect(retryDelayMs(3, 1_000, () => 1)).toBe(3_000);
    expect(retryDelayMs(40, 1_000, () => 0)).toBe(300_000);
  });

  it("gives up on a permanent failure at once and on others after the last attempt", () => {
    expect(isLastAttempt("permanent", 1, 8)).toBe(true);
    expect(isLastAttempt("transient", 7, 8)).toBe(false);
    expect(isLastAttempt("transient", 8, 8)).toBe(true);
  });

  it("reads provider statuses: rate limits and server errors are worth retrying, 401 is a lost grant", () => {
    expect([429, 500, 503, 408, undefined].map(failureKindOfStatus)).toEqual(["transient", "transient", "transient", "transient", "transient"]);
    expect(failureKindOfStatus(401)).toBe("revoked");
    expect(failureKindOfStatus(400)).toBe("permanent");
  });
});
