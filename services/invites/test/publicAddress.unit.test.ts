import { describe, expect, it } from "vitest";
import { CalDavAccount, CalDavRefusal } from "../src/delivery/caldav.js";
import { isPublicAddress } from "../src/domain/publicAddress.js";

describe("public addresses", () => {
  it("are those of the internet", () => {
    for (const ip of ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111", "::ffff:93.184.216.34"]) expect(isPublicAddress(ip)).toBe(true);
  });

  it("are not loopback, private, link-local, shared, unspecified or multicast ones, however written", () => {
    for (const ip of ["127.0.0.1", "127.9.9.9", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "224.0.0.1", "::1", "::", "fd00::1", "fe80::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "not-an-ip"]) {
      expect(isPublicAddress(ip)).toBe(false);
    }
  });
});

describe("CalDAV servers", () => {
  it("on loopback or private addresses are refused before any request, unless allowed", async () => {
    for (const serverUrl of ["http://127.0.0.1:9/", "http://[::1]:9/", "https://10.0.0.7/dav/", "http://localhost:9/"]) {
      const refusal = await CalDavAccount.open({ serverUrl, username: "u", password: "p" }, { timeoutMs: 1_000, allowPrivate: false }).catch((err: unknown) => err);
      expect(refusal).toBeInstanceOf(CalDavRefusal);
      expect(refusal).toMatchObject({ kind: "private" });
    }
    // Allowed, the same address is tried (and nothing listens there).
    const tried = await CalDavAccount.open({ serverUrl: "http://127.0.0.1:9/", username: "u", password: "p" }, { timeoutMs: 1_000, allowPrivate: true }).catch((err: unknown) => err);
    expect(tried).toMatchObject({ kind: "unreachable" });
  });
});
