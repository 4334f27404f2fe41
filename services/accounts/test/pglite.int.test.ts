import { hashApiKey } from "@sched/ids";
import {
  accountsAdminCreateKey,
  accountsAdminCreateUser,
  accountsAdminFindUsers,
  accountsAdminRevokeKey,
  accountsAuthenticate,
  accountsGetMe,
  accountsLookupUsers,
  accountsUpdateMe,
  userCreated,
  userUpdated,
  NO_PREFERENCES,
} from "@sched/proto";
import { eventually } from "@sched/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAccounts, type AccountsHarness } from "./harness.js";

/** Standalone mode runs the same service on embedded Postgres: every query must work there too. */
describe("accounts on PGlite (standalone mode)", () => {
  let h: AccountsHarness;
  beforeAll(async () => {
    h = await startAccounts({ target: "pglite" });
  });
  afterAll(async () => h?.stop());

  it("creates and finds a user, makes, uses and revokes a key, updates the account and publishes events", async () => {
    const created = await h.call(accountsAdminCreateUser, { params: {}, query: {}, body: { email: "Pat@Example.com", name: "Pat", timezone: "Europe/Oslo" } });
    expect(created.status).toBe(201);
    const { id: userId } = created.body as { id: string };
    expect(await h.failure(accountsAdminCreateUser, { params: {}, query: {}, body: { email: "pat@example.com", name: "Pat" } })).toMatchObject({ code: "user_exists" });
    expect((await h.call(accountsAdminFindUsers, { params: {}, query: { email: "PAT@example.com" }, body: undefined })).body).toMatchObject({ data: [{ id: userId }] });

    const keyReply = await h.call(accountsAdminCreateKey, { params: { id: userId }, query: {}, body: { mode: "live", scopes: ["account:read", "account:write"] } });
    const { id: keyId, key } = keyReply.body as { id: string; key: string };
    const { caller } = await h.call(accountsAuthenticate, { keyHash: hashApiKey(key) });
    expect(caller).toEqual({
      userId,
      email: "pat@example.com",
      timezone: "Europe/Oslo",
      mode: "live",
      scopes: ["account:read", "account:write"],
      apiKeyId: keyId,
      rateLimits: { standardPerMinute: null, aiPerMinute: null },
      workingHours: ["monday", "tuesday", "wednesday", "thursday", "friday"].map((day) => ({ day, start: "09:00", end: "17:00" })),
    });

    const workingHours = [{ day: "saturday" as const, start: "10:00", end: "14:00" }];
    const updated = await h.call(accountsUpdateMe, { params: {}, query: {}, body: { timezone: "UTC", workingHours } }, caller);
    expect(updated.body).toEqual({ id: userId, email: "pat@example.com", name: "Pat", timezone: "UTC", workingHours, preferences: NO_PREFERENCES });
    expect((await h.call(accountsGetMe, { params: {}, query: {}, body: undefined }, caller)).body).toEqual(updated.body);
    expect((await h.call(accountsLookupUsers, { emails: ["PAT@EXAMPLE.COM"] })).users).toEqual([updated.body]);

    expect((await h.call(accountsAdminRevokeKey, { params: { id: keyId }, query: {}, body: undefined })).body).toEqual({ id: keyId, revoked: true });
    expect(await h.failure(accountsAuthenticate, { keyHash: hashApiKey(key) })).toMatchObject({ code: "unauthorized" });

    await eventually(() => h.events.length === 2);
    expect(h.events.map((m) => m.subject)).toEqual([userCreated.subject, userUpdated.subject]);
  });
});
