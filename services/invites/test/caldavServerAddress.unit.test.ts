import { describe, expect, it } from "vitest";
import { CalDavAccount, CalDavRefusal } from "../src/outbound/caldav.js";

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
