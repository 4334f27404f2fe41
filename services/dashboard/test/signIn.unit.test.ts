import { describe, expect, it } from "vitest";
import { hashSecret, newSecret, secretsMatch } from "../src/domain/secrets.js";
import { DEFAULT_SESSION_POLICY, needsTouch, sessionCookieOptions, sessionExpired } from "../src/domain/sessions.js";
import { DEFAULT_SIGN_IN_LIMITS, linkExpiry, signInAllowed, signInUrl, SIGN_IN_LINK_TTL_MS } from "../src/domain/signIn.js";
import { parseCookies } from "../src/domain/cookies.js";

describe("secrets", () => {
  it("when a secret is made, then it carries its prefix and 256 bits, and only its hash is what gets stored", () => {
    const secret = newSecret("sil");
    expect(secret).toMatch(/^sil_[0-9A-Za-z]{43}$/);
    expect(newSecret("sil")).not.toBe(secret);
    expect(hashSecret(secret)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashSecret(secret)).not.toContain(secret.slice(4));
  });

  it("when secrets are compared, then only the same text matches, and a missing one never does", () => {
    expect(secretsMatch("csrf_abc", "csrf_abc")).toBe(true);
    expect(secretsMatch("csrf_abd", "csrf_abc")).toBe(false);
    expect(secretsMatch("csrf_ab", "csrf_abc")).toBe(false);
    expect(secretsMatch(undefined, "csrf_abc")).toBe(false);
  });
});

describe("sign-in links", () => {
  it("when a link is made, then it works for 15 minutes", () => {
    const now = new Date("2026-05-04T09:00:00Z");
    expect(linkExpiry(now).getTime() - now.getTime()).toBe(SIGN_IN_LINK_TTL_MS);
    expect(SIGN_IN_LINK_TTL_MS).toBe(15 * 60_000);
  });

  it("when the link is spelled, then it points at the sign-in page of the public address with the token", () => {
    expect(signInUrl("https://api.example.com/dashboard/", "sil_x")).toBe("https://api.example.com/dashboard/sign-in?token=sil_x");
  });

  it("when an address or an e-mail has used its allowance, then the next attempt is refused", () => {
    const limits = { ...DEFAULT_SIGN_IN_LIMITS, perAddress: 3, perEmail: 2 };
    expect(signInAllowed({ byAddress: 2 }, limits)).toBe(true);
    expect(signInAllowed({ byAddress: 3 }, limits)).toBe(false);
    expect(signInAllowed({ byAddress: 0, byEmail: 1 }, limits)).toBe(true);
    expect(signInAllowed({ byAddress: 0, byEmail: 2 }, limits)).toBe(false);
  });
});

describe("sessions", () => {
  const policy = { idleMs: 30 * 60_000, maxAgeMs: 12 * 60 * 60_000 };
  const at = (iso: string) => new Date(iso);

  it("when a session was used within the idle time and is young enough, then it goes on", () => {
    expect(sessionExpired({ createdAt: at("2026-05-04T09:00:00Z"), lastSeenAt: at("2026-05-04T10:00:00Z") }, at("2026-05-04T10:29:59Z"), policy)).toBe(false);
  });

  it("when a session sat unused for the idle time, then it is over", () => {
    expect(sessionExpired({ createdAt: at("2026-05-04T09:00:00Z"), lastSeenAt: at("2026-05-04T10:00:00Z") }, at("2026-05-04T10:30:00Z"), policy)).toBe(true);
  });

  it("when a session is older than its lifetime, then it is over however busy", () => {
    expect(sessionExpired({ createdAt: at("2026-05-04T09:00:00Z"), lastSeenAt: at("2026-05-04T20:59:00Z") }, at("2026-05-04T21:00:00Z"), policy)).toBe(true);
  });

  it("when the last use was written less than a minute ago, then it is not written again", () => {
    expect(needsTouch(at("2026-05-04T10:00:00Z"), at("2026-05-04T10:00:59Z"), policy)).toBe(false);
    expect(needsTouch(at("2026-05-04T10:00:00Z"), at("2026-05-04T10:01:00Z"), policy)).toBe(true);
  });

  it("when the idle time is short, then the last use is written within a tenth of it, so a session in use never lapses", () => {
    const short = { idleMs: 60_000, maxAgeMs: policy.maxAgeMs };
    expect(needsTouch(at("2026-05-04T10:00:00Z"), at("2026-05-04T10:00:05.999Z"), short)).toBe(false);
    expect(needsTouch(at("2026-05-04T10:00:00Z"), at("2026-05-04T10:00:06Z"), short)).toBe(true);
  });

  it("when the cookie is set, then scripts cannot read it, cross-site posts do not carry it, and Secure follows the scheme", () => {
    expect(sessionCookieOptions(true, DEFAULT_SESSION_POLICY)).toMatchObject({ httpOnly: true, sameSite: "lax", secure: true, path: "/dashboard" });
    expect(sessionCookieOptions(false, DEFAULT_SESSION_POLICY).secure).toBe(false);
  });
});

describe("cookies", () => {
  it("when a Cookie header is read, then each name gets its first value, and broken encodings are left out", () => {
    const cookies = parseCookies("a=1; b=%E2%82%AC; a=2; bad=%zz; novalue");
    expect(cookies.get("a")).toBe("1");
    expect(cookies.get("b")).toBe("€");
    expect(cookies.has("bad")).toBe(false);
    expect(parseCookies(undefined).size).toBe(0);
  });
});
