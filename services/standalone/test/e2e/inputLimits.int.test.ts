import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, call, createUserWithKey, expectError, systemPerSuite, WIRINGS, type ApiResponse } from "../harness.js";

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };

/** A 400 invalid_request about `param`, with the envelope. */
function expectRefused(res: ApiResponse, param: string, message?: string): void {
  expectError(res, 400, "invalid_request");
  expect(res.body.error.param).toBe(param);
  if (message) expect(res.body.error.message).toContain(message);
}

describe.each(WIRINGS)("what a client may send, end to end (%s)", async (wiring) => {
  const suite = await systemPerSuite(wiring);
  const { available } = suite;

  it.runIf(available)("dates run from 1970-01-01 to 9998-12-31 on every route; past them a 400 names the field", async () => {
    const ana = await createUserWithKey(suite.url, { timezone: "Pacific/Kiritimati" });
    const range = "must be a date from 1970-01-01 to 9998-12-31";
    for (const date of ["9999-12-31", "december%2031%209999", "1969-12-31"]) {
      expectRefused(await call(suite.url, "GET", `/v1/availability?date=${date}`, { key: ana.key }), "date", range);
    }
    const lastDay = await call(suite.url, "GET", "/v1/availability?date=9998-12-31", { key: ana.key });
    expect(lastDay.status).toBe(200);
    expect(lastDay.body.slots).toEqual([{ start: "09:00", end: "17:00", status: "free" }]);
    expect((await call(suite.url, "GET", "/v1/availability?date=1970-01-01", { key: ana.key })).status).toBe(200);

    const recommend = (window: Record<string, string>) =>
      call(suite.url, "POST", "/v1/availability/recommended", { key: ana.key, body: { participants: ["z@example.com"], duration: "30 mins", ...window } });
    expectRefused(await recommend({ from: "9999-12-01", to: "9999-12-31" }), "from", range);
    expectRefused(await recommend({ from: "9998-12-20", to: "9999-01-01T00:00:00Z" }), "to", range);
    const lastMonth = await recommend({ from: "9998-12-01", to: "9998-12-31" });
    expect(lastMonth.status).toBe(200);
    expect(lastMonth.body.slots.length).toBeGreaterThan(0);
    // Kiritimati is 14 hours ahead of UTC: its December 9998 is [9998-11-30T10:00Z, 9998-12-31T10:00Z).
    for (const slot of lastMonth.body.slots) expect(slot.start >= "9998-11-30T10:00:00Z" && slot.end <= "9998-12-31T10:00:00Z").toBe(true);

    const meeting = (startTime: string) => call(suite.url, "POST", "/v1/meetings", { key: ana.key, body: { title: "Edge", duration: "2 hours", startTime, participants: ["z@example.com"] } });
    expectRefused(await meeting("9999-12-31T10:00:00Z"), "startTime", range);
    expectRefused(await meeting("1969-12-31T23:00:00Z"), "startTime", range);
    const latest = await meeting("9998-12-31T23:59:59-18:00");
    expect(latest.status).toBe(201);
    expect(latest.body.startTime).toBe("9999-01-01T17:59:59Z");
  });

  it.runIf(available)("a NUL in any text field or query parameter is a 400 naming it, not a 500 from storage", async () => {
    const ana = await createUserWithKey(suite.url);
    const storable = "must not contain NUL characters or unpaired surrogates";
    expectRefused(await call(suite.url, "PATCH", "/v1/me", { key: ana.key, body: { name: "Ana\u0000" } }), "name", storable);
    expectRefused(await call(suite.url, "POST", "/admin/v1/users", { headers: admin, body: { email: "nul@example.com", name: "N\u0000L" } }), "name", storable);
    const me = await call(suite.url, "GET", "/v1/me", { key: ana.key });
    expectRefused(await call(suite.url, "POST", `/admin/v1/users/${me.body.id}/api-keys`, { headers: admin, body: { mode: "test", name: "ci\u0000" } }), "name", storable);
    expectRefused(await call(suite.url, "PATCH", `/admin/v1/api-keys/key%00`, { headers: admin, body: { rateLimits: { standardPerMinute: 5 } } }), "id", storable);
    expectRefused(await call(suite.url, "GET", "/admin/v1/users?email=a%00@example.com", { headers: admin }), "email", storable);
    expectRefused(await call(suite.url, "GET", "/v1/meetings?startingAfter=mtg_%00", { key: ana.key }), "startingAfter", storable);
    expectRefused(await call(suite.url, "POST", "/v1/meetings", { key: ana.key, body: { title: "Sync", description: "\ud800", duration: "30 mins", startTime: "2030-03-04T10:00:00Z", participants: ["z@example.com"] } }), "description", storable);
    // Nothing half-written: the account and the user list are as before.
    expect((await call(suite.url, "GET", "/v1/me", { key: ana.key })).body.name).toBe(me.body.name);
    expect((await call(suite.url, "GET", "/admin/v1/users?email=nul@example.com", { headers: admin })).body.data).toEqual([]);
  });

  it.runIf(available)("a query parameter holding CR or LF is a 400 naming it, and the system goes on serving", async () => {
    const ana = await createUserWithKey(suite.url);
    for (const date of ["a%0Ab", "a%0Db", "%0D%0AX-Injected:%201", "a%1Bb%7F"]) {
      expectRefused(await call(suite.url, "GET", `/v1/availability?date=${date}`, { key: ana.key }), "date");
    }
    expect((await call(suite.url, "GET", "/v1/availability?date=2030-03-04", { key: ana.key })).status).toBe(200);
  });

  it.runIf(available)("an unpaired surrogate escaped in the JSON text is a 400 naming the field on every route, and nothing is stored", async () => {
    const ana = await createUserWithKey(suite.url);
    const storable = "must not contain NUL characters or unpaired surrogates";
    const json = { key: ana.key, headers: { "Content-Type": "application/json" } };
    expectRefused(await call(suite.url, "PATCH", "/v1/me", { ...json, rawBody: String.raw`{"name":"a\ud800b"}` }), "name", storable);
    expectRefused(await call(suite.url, "PATCH", "/v1/me", { ...json, rawBody: String.raw`{"name":"a\udc00"}` }), "name", storable);
    const meeting = String.raw`{"title":"a\ud800b","duration":"30 mins","startTime":"2030-03-04T10:00:00Z","participants":["z@example.com"]}`;
    expectRefused(await call(suite.url, "POST", "/v1/meetings", { ...json, rawBody: meeting }), "title", storable);
    expect((await call(suite.url, "GET", "/v1/me", { key: ana.key })).body.name).toBe("Test User");
  });

  it.runIf(available)("a body whose bytes are not UTF-8 (an encoded surrogate, a stray byte) is a 400 invalid_json on every route, not U+FFFD stored", async () => {
    const ana = await createUserWithKey(suite.url);
    const send = (method: string, path: string, before: string, bad: number[], after: string) =>
      fetch(`${suite.url}${path}`, { method, headers: { Authorization: `Bearer ${ana.key}`, "Content-Type": "application/json" }, body: Buffer.concat([Buffer.from(before), Buffer.from(bad), Buffer.from(after)]) });
    const meeting = '","duration":"30 mins","startTime":"2030-03-04T10:00:00Z","participants":["z@example.com"]}';
    for (const bad of [[0xed, 0xa0, 0x80], [0xff], [0xc3]]) {
      for (const res of [await send("PATCH", "/v1/me", '{"name":"a', bad, 'b"}'), await send("POST", "/v1/meetings", '{"title":"a', bad, meeting)]) {
        expect(res.status).toBe(400);
        expect(((await res.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: "invalid_json", message: "The request body is not valid UTF-8." });
      }
    }
    expect((await call(suite.url, "GET", "/v1/me", { key: ana.key })).body.name).toBe("Test User");
    expect((await call(suite.url, "GET", "/v1/meetings", { key: ana.key })).body.data).toEqual([]);
  });

  it.runIf(available)("a list of large meetings is walked whole, a page holding what one message carries", { timeout: 180_000 }, async () => {
    const org = await createUserWithKey(suite.url);
    const limits = await call(suite.url, "PATCH", `/admin/v1/api-keys/${org.keyId}`, { headers: admin, body: { rateLimits: { standardPerMinute: 10_000 } } });
    expect(limits.status).toBe(200);
    // 100 addresses of 220 characters: each list item is about 22 KB, a full page of 100 over 2 MB.
    const participants = (i: number) => Array.from({ length: 100 }, (_, j) => `${"p".repeat(200)}-${i}-${j}@example.com`);
    const made: string[] = [];
    for (let i = 0; i < 100; i++) {
      const startTime = new Date(Date.UTC(2031, 0, 1, 8) + i * 3_600_000).toISOString().replace(".000Z", "Z");
      const res = await call(suite.url, "POST", "/v1/meetings", { key: org.key, body: { title: `Review ${i}`, duration: "15 mins", startTime, participants: participants(i) } });
      expect(res.status).toBe(201);
      made.push(res.body.id);
    }

    const seen: string[] = [];
    const pageSizes: number[] = [];
    let startingAfter: string | undefined;
    while (pageSizes.length < 100) {
      const res = await call(suite.url, "GET", `/v1/meetings?filter=all&limit=100${startingAfter ? `&startingAfter=${startingAfter}` : ""}`, { key: org.key });
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeGreaterThanOrEqual(1);
      seen.push(...res.body.data.map((m: { id: string }) => m.id));
      pageSizes.push(res.body.data.length);
      if (!res.body.hasMore) break;
      startingAfter = seen.at(-1);
    }
    // `all` is latest first: exactly the meetings made, newest first, none twice.
    expect(seen).toEqual([...made].reverse());
    if (wiring === "cluster") expect(pageSizes.length).toBeGreaterThan(1);
  });

  it.runIf(available)("recommendations across 100 people with long addresses answer with the best slots one message carries", { timeout: 180_000 }, async () => {
    const me = await createUserWithKey(suite.url);
    await call(suite.url, "PATCH", `/admin/v1/api-keys/${me.keyId}`, { headers: admin, body: { rateLimits: { standardPerMinute: 10_000, aiPerMinute: 100 } } });
    const tag = Math.random().toString(36).slice(2, 8);
    const people = Array.from({ length: 100 }, (_, i) => `${"q".repeat(230)}-${tag}-${i}@example.com`);
    for (const email of people) {
      expect((await call(suite.url, "POST", "/admin/v1/users", { headers: admin, body: { email, name: "Long" } })).status).toBe(201);
      expect((await call(suite.url, "POST", "/v1/contacts", { key: me.key, body: { email } })).status).toBe(201);
    }
    // Every slot names all 101 people inside their working hours: 50 of them would be 1.3 MB.
    const res = await call(suite.url, "POST", "/v1/availability/recommended", {
      key: me.key,
      body: { participants: people, duration: "30 mins", from: "2031-01-06", to: "2031-01-10", limit: 50 },
    });
    expect(res.status).toBe(200);
    expect(res.body.consideredParticipants).toHaveLength(100);
    expect(res.body.slots.length).toBeGreaterThanOrEqual(1);
    for (const slot of res.body.slots) expect(slot.withinWorkingHours).toHaveLength(101);
    if (wiring === "cluster") expect(res.body.slots.length).toBeLessThan(50);
    else expect(res.body.slots).toHaveLength(50);
  });
});
