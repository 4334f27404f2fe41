import type { Caller } from "@sched/proto";
import { describe, expect, it } from "vitest";
import { KeyCache } from "../src/outbound/keys/keyCache.js";

const callerOf = (userId: string, apiKeyId: string): Caller => ({
  userId,
  email: `${userId}@example.com`,
  timezone: "UTC",
  mode: "test",
  scopes: ["meetings:write"],
  apiKeyId,
});

describe("the cache of resolved keys", () => {
  it("when a user's callers are dropped, then every key of that user is asked for again and other users' keys stay", () => {
    const cache = new KeyCache(60_000);
    cache.set("hash-a1", callerOf("usr_a", "key_a1"), 0);
    cache.set("hash-a2", callerOf("usr_a", "key_a2"), 0);
    cache.set("hash-b1", callerOf("usr_b", "key_b1"), 0);

    cache.dropUser("usr_a");

    expect(cache.get("hash-a1", 1)).toBeUndefined();
    expect(cache.get("hash-a2", 1)).toBeUndefined();
    expect(cache.get("hash-b1", 1)?.apiKeyId).toBe("key_b1");
  });

  it("when an entry is older than the TTL, then it is gone", () => {
    const cache = new KeyCache(1_000);
    cache.set("hash", callerOf("usr_a", "key_a"), 0);
    expect(cache.get("hash", 999)?.userId).toBe("usr_a");
    expect(cache.get("hash", 1_000)).toBeUndefined();
  });

  it("when an entry is past half its TTL, then it still serves and is due for renewal", () => {
    const cache = new KeyCache(1_000);
    cache.set("hash", callerOf("usr_a", "key_a"), 0);
    expect(cache.lookUp("hash", 499)).toMatchObject({ caller: { userId: "usr_a" }, renewalDue: false });
    expect(cache.lookUp("hash", 500)).toMatchObject({ caller: { userId: "usr_a" }, renewalDue: true });
    cache.set("hash", callerOf("usr_a", "key_a"), 600);
    expect(cache.lookUp("hash", 1_099)).toMatchObject({ renewalDue: false });
    expect(cache.lookUp("hash", 1_600)).toBeUndefined();
  });

  it("when an answer took long, then its entry lasts the TTL from when it was asked, not from its arrival", () => {
    const cache = new KeyCache(1_000);
    cache.set("hash", callerOf("usr_a", "key_a"), 0);
    expect(cache.get("hash", 999)).toBeDefined();
    expect(cache.get("hash", 1_000)).toBeUndefined();
  });
});
