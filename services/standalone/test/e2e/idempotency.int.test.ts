import { DateTime } from "luxon";
import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, call, createUserWithKey, expectError, perSuite, startTestSystem, WIRINGS, type TestSystem } from "../harness.js";

const monday = DateTime.utc().plus({ weeks: 2 }).startOf("week").toISODate()!;

describe.each(WIRINGS)("Idempotency-Key on every public POST (%s)", async (wiring) => {
  let sys: TestSystem;
  let url: string;
  let n = 0;
  const idem = () => ({ "Idempotency-Key": `idem-${wiring}-${Date.now()}-${n++}` });
  const { available } = await perSuite(wiring, async () => {
    sys = await startTestSystem(wiring);
    url = sys.url;
    return sys;
  });

  it.runIf(available)("a repeated contact add answers the first 201 again and adds nothing", async () => {
    const owner = await createUserWithKey(url);
    const headers = idem();
    const first = await call(url, "POST", "/v1/contacts", { key: owner.key, body: { email: "ana@example.com" }, headers });
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await call(url, "POST", "/v1/contacts", { key: owner.key, body: { email: "ana@example.com" }, headers });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    // Without the key the same add is a conflict, as before.
    expectError(await call(url, "POST", "/v1/contacts", { key: owner.key, body: { email: "ana@example.com" } }), 409, "contact_exists");
    expect((await call(url, "GET", "/v1/contacts", { key: owner.key })).body.data).toHaveLength(1);
  });

  it.runIf(available)("concurrent adds with one key make one contact; the others wait their turn (409) or get the replay", async () => {
    const owner = await createUserWithKey(url);
    const headers = idem();
    const answers = await Promise.all(Array.from({ length: 5 }, () => call(url, "POST", "/v1/contacts", { key: owner.key, body: { email: "bo@example.com" }, headers })));
    const created = answers.filter((a) => a.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    for (const a of answers.filter((x) => x.status !== 201)) expectError(a, 409, "idempotency_request_in_progress");
    expect(new Set(created.map((a) => a.body.id)).size).toBe(1);
    expect((await call(url, "GET", "/v1/contacts", { key: owner.key })).body.data).toHaveLength(1);
  });

  it.runIf(available)("the same key with another body, or on another endpoint, is 422 idempotency_key_reused", async () => {
    const owner = await createUserWithKey(url);
    const headers = idem();
    expect((await call(url, "POST", "/v1/contacts", { key: owner.key, body: { email: "cy@example.com" }, headers })).status).toBe(201);
    expectError(await call(url, "POST", "/v1/contacts", { key: owner.key, body: { email: "di@example.com" }, headers }), 422, "idempotency_key_reused");
    const meeting = { title: "Sync", duration: "30 mins", startTime: `${monday}T10:00:00Z`, participants: ["cy@example.com"] };
    expectError(await call(url, "POST", "/v1/meetings", { key: owner.key, body: meeting, headers }), 422, "idempotency_key_reused");
    expect((await call(url, "GET", "/v1/meetings?filter=all", { key: owner.key })).body.data).toHaveLength(0);
    expect((await call(url, "GET", "/v1/contacts", { key: owner.key })).body.data).toHaveLength(1);
  });

  it.runIf(available)("keys are per API key: another key of the same user may use the same Idempotency-Key", async () => {
    const owner = await createUserWithKey(url);
    const secondKey = await call(url, "POST", `/admin/v1/users/${owner.userId}/api-keys`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` }, body: { mode: "test" } });
    const second = { key: secondKey.body.key as string };
    const headers = idem();
    expect((await call(url, "POST", "/v1/contacts", { key: owner.key, body: { email: "ed@example.com" }, headers })).status).toBe(201);
    const other = await call(url, "POST", "/v1/contacts", { key: second.key, body: { email: "fay@example.com" }, headers });
    expect(other.status).toBe(201);
    expect(other.headers.get("idempotent-replayed")).toBeNull();
  });

  it.runIf(available)("a refused request is not remembered: fixing the body under the same key works", async () => {
    const owner = await createUserWithKey(url);
    const headers = idem();
    expectError(await call(url, "POST", "/v1/contacts", { key: owner.key, body: { email: "not-an-address" }, headers }), 400, "invalid_request");
    const fixed = await call(url, "POST", "/v1/contacts", { key: owner.key, body: { email: "gus@example.com" }, headers });
    expect(fixed.status).toBe(201);
    expect(fixed.headers.get("idempotent-replayed")).toBeNull();
  });

  it.runIf(available)("recommended times answer the first result again for a repeated key", async () => {
    const owner = await createUserWithKey(url);
    const headers = idem();
    const body = { participants: ["someone@example.com"], duration: "30 mins", from: monday, to: monday };
    const first = await call(url, "POST", "/v1/availability/recommended", { key: owner.key, body, headers });
    expect(first.status).toBe(200);
    const again = await call(url, "POST", "/v1/availability/recommended", { key: owner.key, body, headers });
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
  });

  it.runIf(available)("a malformed Idempotency-Key is a 400 naming the header", async () => {
    const owner = await createUserWithKey(url);
    const res = await call(url, "POST", "/v1/contacts", { key: owner.key, body: { email: "hal@example.com" }, headers: { "Idempotency-Key": "x".repeat(256) } });
    expectError(res, 400, "invalid_request");
    expect(res.body.error.param).toBe("Idempotency-Key");
  });
});
