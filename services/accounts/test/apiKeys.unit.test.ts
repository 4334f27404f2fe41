import { newId } from "@sched/ids";
import { SCOPES } from "@sched/proto";
import { describe, expect, it } from "vitest";
import { apiKeyPreview, keyScopes, requireKeyId, requireUserId } from "../src/domain/apiKeys.js";
import { thrown } from "@sched/testing";

describe("key scopes", () => {
  it("when no scopes are asked for, then the key has all of them", () => {
    expect(keyScopes()).toEqual([...SCOPES]);
    expect(keyScopes()).not.toBe(SCOPES);
  });

  it("when scopes are asked for, then the key has those, once each, in canonical order", () => {
    expect(keyScopes(["contacts:write", "meetings:read", "contacts:write"])).toEqual(["meetings:read", "contacts:write"]);
  });
});

describe("ids in paths", () => {
  it("when an id has the right shape, then it is returned", () => {
    const usr = newId("usr");
    const key = newId("key");
    expect(requireUserId(usr)).toBe(usr);
    expect(requireKeyId(key)).toBe(key);
  });

  it.each(["usr_short", "key_0123456789ABCDEFGHIJKLMN", "", "usr_0123456789abcdefghijklm!"])("when a user id is %j, then 404", (id) => {
    expect(thrown(() => requireUserId(id))).toMatchObject({ code: "not_found", status: 404 });
  });

  it("when a key id has the shape of a user id, then 404", () => {
    expect(thrown(() => requireKeyId(newId("usr")))).toMatchObject({ code: "not_found", status: 404 });
  });
});

describe("key previews", () => {
  it("when the last four characters are kept, then the key shows as its prefix and those four", () => {
    expect(apiKeyPreview({ mode: "test", hint: "sk_test_AbCd…", lastFour: "wxYZ" })).toBe("sk_test_…wxYZ");
    expect(apiKeyPreview({ mode: "live", hint: "sk_live_AbCd…", lastFour: "0a1b" })).toBe("sk_live_…0a1b");
  });

  it("when a key was made before last fours were kept, then its older hint shows", () => {
    expect(apiKeyPreview({ mode: "test", hint: "sk_test_AbCd…", lastFour: null })).toBe("sk_test_AbCd…");
  });
});
