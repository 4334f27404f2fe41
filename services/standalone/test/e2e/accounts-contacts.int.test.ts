import { SCOPES } from "@sched/proto";
import { eventually } from "@sched/testing";
import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, call, createUserWithKey, expectError, systemPerSuite, WIRINGS } from "../harness.js";

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

describe.each(WIRINGS)("accounts, admin API and contacts end to end (%s)", async (wiring) => {
  const suite = await systemPerSuite(wiring);
  const { available } = suite;

  it.runIf(available)("creates users and keys through the admin API, keeping only a hash of the key", async () => {
    const created = await call(suite.url, "POST", "/admin/v1/users", { headers: admin, body: { email: "Ann@Example.com", name: "Ann", timezone: "Europe/Berlin" } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ email: "ann@example.com", name: "Ann", timezone: "Europe/Berlin" });
    expect(created.body.id).toMatch(/^usr_[0-9A-Za-z]{24}$/);
    expect(created.body.createdAt).toMatch(TIMESTAMP);
    expectError(await call(suite.url, "POST", "/admin/v1/users", { headers: admin, body: { email: "ann@example.com", name: "Other" } }), 409, "user_exists");
    expectError(await call(suite.url, "POST", "/admin/v1/users", { headers: admin, body: { email: "b@example.com", name: "B", timezone: "Mars/Base" } }), 400, "invalid_request");

    const key = await call(suite.url, "POST", `/admin/v1/users/${created.body.id}/api-keys`, { headers: admin, body: { mode: "live", name: "prod" } });
    expect(key.status).toBe(201);
    expect(key.body.key).toMatch(/^sk_live_[0-9A-Za-z]{32,}$/);
    expect(key.body.id).toMatch(/^key_[0-9A-Za-z]{24}$/);
    expect([...key.body.scopes].sort()).toEqual([...SCOPES].sort());
    const stored = JSON.stringify(await suite.sys.system.database("accounts")("api_keys").select());
    expect(stored).not.toContain(key.body.key);
    expect(stored).not.toContain(key.body.key.slice(8));

    expectError(await call(suite.url, "POST", "/admin/v1/users/usr_000000000000000000000000/api-keys", { headers: admin, body: { mode: "test" } }), 404, "not_found");
    const found = await call(suite.url, "GET", "/admin/v1/users?email=ANN@example.com", { headers: admin });
    expect(found.body.data).toHaveLength(1);
    expect(found.body.data[0].id).toBe(created.body.id);
  });

  it.runIf(available)("reads and updates the caller's own account with /v1/me", async () => {
    const { key, email } = await createUserWithKey(suite.url, { name: "Bo" });
    const me = await call(suite.url, "GET", "/v1/me", { key });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ email, name: "Bo", timezone: "UTC" });
    expect(me.body.workingHours).toHaveLength(5);
    expect(me.body.workingHours[0]).toEqual({ day: "monday", start: "09:00", end: "17:00" });

    const hours = [
      { day: "monday", start: "08:00", end: "12:00" },
      { day: "monday", start: "13:00", end: "17:30" },
    ];
    const patched = await call(suite.url, "PATCH", "/v1/me", { key, body: { timezone: "America/New_York", workingHours: hours } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ email, name: "Bo", timezone: "America/New_York", workingHours: hours });
    expect((await call(suite.url, "GET", "/v1/me", { key })).body.timezone).toBe("America/New_York");

    const badZone = await call(suite.url, "PATCH", "/v1/me", { key, body: { timezone: "Nowhere/City" } });
    expectError(badZone, 400, "invalid_request");
    expect(badZone.body.error.param).toBe("timezone");
    const badHours = await call(suite.url, "PATCH", "/v1/me", { key, body: { workingHours: [{ day: "monday", start: "17:00", end: "09:00" }] } });
    expectError(badHours, 400, "invalid_request");
    expect(badHours.body.error.param).toMatch(/^workingHours\[0\]/);
    const badTime = await call(suite.url, "PATCH", "/v1/me", { key, body: { workingHours: [{ day: "monday", start: "09:00", end: "24:00" }] } });
    expectError(badTime, 400, "invalid_request");
    expect((await call(suite.url, "GET", "/v1/me", { key })).body.timezone).toBe("America/New_York");
  });

  it.runIf(available)("adds, lists, reads, blocks and deletes contacts by the rules", async () => {
    const ann = await createUserWithKey(suite.url, { name: "Ann Owner" });
    const carl = await createUserWithKey(suite.url, { name: "Carl Known" });

    const added = await call(suite.url, "POST", "/v1/contacts", { key: ann.key, body: { email: carl.email.toUpperCase(), relationship: "colleague" } });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ email: carl.email, name: "Carl Known", relationship: "colleague", blocked: false });
    expect(added.body.id).toMatch(/^ctc_[0-9A-Za-z]{24}$/);
    expect(added.body.addedAt).toMatch(TIMESTAMP);

    const stranger = await call(suite.url, "POST", "/v1/contacts", { key: ann.key, body: { email: "stranger@example.org" } });
    expect(stranger.status).toBe(201);
    expect(stranger.body).toMatchObject({ name: null, relationship: "other", blocked: false });

    expectError(await call(suite.url, "POST", "/v1/contacts", { key: ann.key, body: { email: carl.email } }), 409, "contact_exists");
    const self = await call(suite.url, "POST", "/v1/contacts", { key: ann.key, body: { email: ann.email } });
    expectError(self, 400, "invalid_request");
    expect(self.body.error.param).toBe("email");
    expectError(await call(suite.url, "POST", "/v1/contacts", { key: ann.key, body: { email: "x@example.com", relationship: "boss" } }), 400, "invalid_request");

    const list = await call(suite.url, "GET", "/v1/contacts", { key: ann.key });
    expect(list.status).toBe(200);
    expect(Object.keys(list.body)).toEqual(["data"]);
    expect(list.body.data.map((c: { id: string }) => c.id)).toEqual([stranger.body.id, added.body.id]);

    const blocked = await call(suite.url, "PATCH", `/v1/contacts/${stranger.body.id}`, { key: ann.key, body: { blocked: true } });
    expect(blocked.status).toBe(200);
    expect(blocked.body).toMatchObject({ id: stranger.body.id, blocked: true, relationship: "other" });
    expect((await call(suite.url, "GET", "/v1/contacts", { key: ann.key })).body.data).toHaveLength(1);
    expect((await call(suite.url, "GET", "/v1/contacts?includeBlocked=true", { key: ann.key })).body.data).toHaveLength(2);
    expect((await call(suite.url, "GET", "/v1/contacts?includeBlocked=false", { key: ann.key })).body.data).toHaveLength(1);

    expect((await call(suite.url, "GET", `/v1/contacts/${added.body.id}`, { key: ann.key })).body).toEqual(added.body);
    expectError(await call(suite.url, "GET", `/v1/contacts/${added.body.id}`, { key: carl.key }), 404, "not_found");
    expectError(await call(suite.url, "PATCH", `/v1/contacts/${added.body.id}`, { key: carl.key, body: { blocked: true } }), 404, "not_found");
    expectError(await call(suite.url, "GET", "/v1/contacts/not-an-id", { key: ann.key }), 404, "not_found");

    const deleted = await call(suite.url, "DELETE", `/v1/contacts/${added.body.id}`, { key: ann.key });
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeUndefined();
    expectError(await call(suite.url, "GET", `/v1/contacts/${added.body.id}`, { key: ann.key }), 404, "not_found");
  });

  it.runIf(available)("fills a contact's name when its account is created later", async () => {
    const owner = await createUserWithKey(suite.url);
    const email = `later-${Date.now()}@example.com`;
    const added = await call(suite.url, "POST", "/v1/contacts", { key: owner.key, body: { email } });
    expect(added.body.name).toBeNull();
    await createUserWithKey(suite.url, { email, name: "Late Joiner" });
    await eventually(async () => (await call(suite.url, "GET", `/v1/contacts/${added.body.id}`, { key: owner.key })).body.name === "Late Joiner", 5_000);
  });

  it.runIf(available)("keeps test and live data apart", async () => {
    const user = await createUserWithKey(suite.url, { mode: "test" });
    const liveKey = await call(suite.url, "POST", `/admin/v1/users/${user.userId}/api-keys`, { headers: admin, body: { mode: "live" } });
    const live = liveKey.body.key as string;
    const inTest = await call(suite.url, "POST", "/v1/contacts", { key: user.key, body: { email: "mode@example.com" } });
    expect(inTest.status).toBe(201);
    expect((await call(suite.url, "GET", "/v1/contacts", { key: live })).body.data).toEqual([]);
    expectError(await call(suite.url, "GET", `/v1/contacts/${inTest.body.id}`, { key: live }), 404, "not_found");
    expect((await call(suite.url, "POST", "/v1/contacts", { key: live, body: { email: "mode@example.com" } })).status).toBe(201);
    expect((await call(suite.url, "GET", "/v1/contacts", { key: user.key })).body.data).toHaveLength(1);
  });
});
