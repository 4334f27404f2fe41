import { newId } from "@sched/ids";
import { SCOPES } from "@sched/proto";
import { describe, expect, it } from "vitest";
import { keyScopes, requireKeyId, requireUserId } from "../src/domain/apiKeys.js";
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
