import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, call, createUserWithKey, expectError, perSuite, startTestSystem, WIRINGS, type TestSystem } from "../harness.js";
import { rawRequest } from "../raw.js";

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const json = { "Content-Type": "application/json" };
/** `{"email":[[…]]}` with `levels` arrays, the email's nesting included. */
const nested = (levels: number) => `{"email":${"[".repeat(levels)}${"]".repeat(levels)}}`;

describe.each(WIRINGS)("HTTP edge and authentication (%s)", async (wiring) => {
  let sys: TestSystem;
  let key: string;
  let url: string;
  const { available } = await perSuite(wiring, async () => {
    sys = await startTestSystem(wiring);
    url = sys.url;
    ({ key } = await createUserWithKey(url));
    return sys;
  });

  it.runIf(available)("answers an unknown path with 404 whatever the key", async () => {
    expectError(await call(url, "GET", "/v1/nope"), 404, "not_found");
    expectError(await call(url, "GET", "/v1/nope", { key: "garbage" }), 404, "not_found");
    expectError(await call(url, "GET", "/v2/contacts", { key }), 404, "not_found");
  });

  it.runIf(available)("takes a path segment that is not valid percent-encoding as written: an unknown id once the key is counted, 405 for another method", async () => {
    for (const method of ["GET", "DELETE"]) {
      const res = await call(url, method, "/v1/contacts/%zz", { key });
      expectError(res, 404, "not_found");
      expect(res.headers.get("x-ratelimit-limit")).toBe("100");
    }
    expectError(await call(url, "GET", "/v1/meetings/%E0%A4%A", { key }), 404, "not_found");
    expectError(await call(url, "DELETE", "/v1/meetings/%zz"), 401, "unauthorized");
    const other = await call(url, "PUT", "/v1/meetings/%zz", { key });
    expectError(other, 405, "method_not_allowed");
    expect(other.headers.get("allow")).toBe("DELETE, GET, PATCH");
    expectError(await call(url, "GET", "/v1/m%zze", { key }), 404, "not_found");
  });

  it.runIf(available)("answers a known path with the wrong method with 405 and Allow", async () => {
    const res = await call(url, "PUT", "/v1/contacts", { key });
    expectError(res, 405, "method_not_allowed");
    expect(res.headers.get("allow")).toBe("GET, POST");
  });

  it.runIf(available)("refuses a missing, malformed, unknown or revoked key with 401", async () => {
    expectError(await call(url, "GET", "/v1/me"), 401, "unauthorized");
    expectError(await call(url, "GET", "/v1/me", { headers: { Authorization: "Basic abc" } }), 401, "unauthorized");
    expectError(await call(url, "GET", "/v1/me", { key: "sk_prod_0123456789012345678901234567890123" }), 401, "unauthorized");
    expectError(await call(url, "GET", "/v1/me", { key: "sk_test_short" }), 401, "unauthorized");
    expectError(await call(url, "GET", "/v1/me", { key: `sk_test_${"A".repeat(40)}` }), 401, "unauthorized");

    const fresh = await createUserWithKey(url);
    expect((await call(url, "GET", "/v1/me", { key: fresh.key })).status).toBe(200);
    const revoked = await call(url, "DELETE", `/admin/v1/api-keys/${fresh.keyId}`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ id: fresh.keyId, revoked: true });
    expectError(await call(url, "GET", "/v1/me", { key: fresh.key }), 401, "unauthorized");
  });

  it.runIf(available)("refuses a key without the scope with 403 naming the scope", async () => {
    const limited = await createUserWithKey(url, { scopes: ["contacts:read"] });
    const res = await call(url, "GET", "/v1/me", { key: limited.key });
    expectError(res, 403, "forbidden");
    expect(res.body.error.message).toContain("account:read");
    expect((await call(url, "GET", "/v1/contacts", { key: limited.key })).status).toBe(200);
    expectError(await call(url, "POST", "/v1/contacts", { key: limited.key, body: { email: "x@example.com" } }), 403, "forbidden");
  });

  it.runIf(available)("refuses bodies that are not JSON, too large or malformed", async () => {
    expectError(await call(url, "POST", "/v1/contacts", { key, rawBody: "email=a@b.c", headers: { "Content-Type": "application/x-www-form-urlencoded" } }), 415, "unsupported_media_type");
    expectError(await call(url, "POST", "/v1/contacts", { key, rawBody: "{not json", headers: { "Content-Type": "application/json" } }), 400, "invalid_json");
    const big = JSON.stringify({ email: "a@example.com", relationship: "x".repeat(110 * 1024) });
    expectError(await call(url, "POST", "/v1/contacts", { key, rawBody: big, headers: { "Content-Type": "application/json" } }), 413, "payload_too_large");
  });

  it.runIf(available)("refuses a body nested deeper than 32 levels with 400 invalid_json, on every route, before anything walks it", async () => {
    for (const levels of [5_000, 33]) {
      const res = await call(url, "POST", "/v1/contacts", { key, rawBody: nested(levels), headers: json });
      expectError(res, 400, "invalid_json");
      expect(res.body.error.message).toContain("32 levels");
    }
    expectError(await call(url, "POST", "/admin/v1/users", { headers: { ...admin, ...json }, rawBody: nested(5_000) }), 400, "invalid_json");
    expectError(await call(url, "POST", "/v1/contacts", { key, rawBody: nested(3_000), headers: { ...json, "Idempotency-Key": "deep-1" } }), 400, "invalid_json");
    // Brackets in strings are text; 32 levels (the object and 31 arrays) reach the service's validation.
    const inText = await call(url, "POST", "/v1/contacts", { key, body: { email: "[".repeat(5_000) } });
    expectError(inText, 400, "invalid_request");
    expect(inText.body.error.param).toBe("email");
    const deepest = await call(url, "POST", "/v1/contacts", { key, rawBody: nested(31), headers: json });
    expectError(deepest, 400, "invalid_request");
    expect(deepest.body.error.param).toBe("email");
  });

  it.runIf(available)("refuses a number JSON cannot carry (1e309) with 400 naming the field, and keeps what was set", async () => {
    const mine = await createUserWithKey(url);
    expect((await call(url, "PATCH", `/admin/v1/api-keys/${mine.keyId}`, { headers: admin, body: { rateLimits: { standardPerMinute: 7 } } })).status).toBe(200);
    const limit = await call(url, "PATCH", `/admin/v1/api-keys/${mine.keyId}`, { headers: { ...admin, ...json }, rawBody: '{"rateLimits":{"standardPerMinute":1e309}}' });
    expectError(limit, 400, "invalid_request");
    expect(limit.body.error.param).toBe("rateLimits.standardPerMinute");
    expect((await call(url, "GET", "/v1/me", { key: mine.key })).headers.get("x-ratelimit-limit")).toBe("7");
    const buffer = await call(url, "PATCH", "/v1/me", { key: mine.key, rawBody: '{"preferences":{"bufferMinutes":-1e309}}', headers: json });
    expectError(buffer, 400, "invalid_request");
    expect(buffer.body.error.param).toBe("preferences.bufferMinutes");
  });

  it.runIf(available)("answers an HTTP/1.1 request without Host with 400, the envelope and a request id", async () => {
    const answer = await rawRequest(url, "GET /v1/me HTTP/1.1\r\nConnection: close\r\n\r\n");
    expect(answer.status, answer.text).toBe(400);
    expect(answer.headers["content-type"]).toMatch(/^application\/json/);
    expect(answer.body?.error?.code).toBe("invalid_request");
    expect(answer.body.error.param).toBe("Host");
    expect(answer.body.error.requestId).toBe(answer.headers["x-request-id"]);
    expect(answer.headers["x-request-id"]).toMatch(/^req_/);
  });

  it.runIf(available)("answers a conditional request (If-None-Match, If-Modified-Since) in full: the API keeps no validators", async () => {
    // Sent raw: fetch adds Cache-Control: no-cache to a conditional request, which hides the 304.
    const conditions = ["If-None-Match: *", 'If-None-Match: W/"x", *', "If-Modified-Since: Fri, 01 Jan 2100 00:00:00 GMT"];
    const reads = [
      ...["/v1/me", "/v1/meetings", "/v1/contacts", "/v1/calendar-connections"].map((path) => ({ path, auth: `Authorization: Bearer ${key}\r\n` })),
      { path: "/v1/openapi.json", auth: "" },
      { path: "/admin/v1/users?email=nobody%40example.com", auth: `Authorization: Bearer ${ADMIN_TOKEN}\r\n` },
    ];
    for (const { path, auth } of reads) {
      for (const condition of conditions) {
        const answer = await rawRequest(url, `GET ${path} HTTP/1.1\r\nHost: localhost\r\n${auth}${condition}\r\nConnection: close\r\n\r\n`, { keepOpen: true });
        expect([path, condition, answer.status]).toEqual([path, condition, 200]);
        expect(answer.body).toBeTypeOf("object");
      }
    }
  });

  it.runIf(available)("names the bad field in invalid_request errors", async () => {
    const unknown = await call(url, "POST", "/v1/contacts", { key, body: { email: "a@example.com", nickname: "A" } });
    expectError(unknown, 400, "invalid_request");
    expect(unknown.body.error.param).toBe("nickname");
    const wrongType = await call(url, "POST", "/v1/contacts", { key, body: { email: 42 } });
    expectError(wrongType, 400, "invalid_request");
    expect(wrongType.body.error.param).toBe("email");
    expect(wrongType.body.error.message).toContain("email");
    const query = await call(url, "GET", "/v1/contacts?includeBlocked=yes", { key });
    expectError(query, 400, "invalid_request");
    expect(query.body.error.param).toBe("includeBlocked");
  });

  it.runIf(available)("refuses browser preflights and never sends CORS headers", async () => {
    const res = await call(url, "OPTIONS", "/v1/contacts", { headers: { Origin: "https://example.com", "Access-Control-Request-Method": "GET" } });
    expectError(res, 403, "forbidden");
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    const get = await call(url, "GET", "/v1/contacts", { key, headers: { Origin: "https://example.com" } });
    expect(get.headers.get("access-control-allow-origin")).toBeNull();
  });

  it.runIf(available)("echoes a sane X-Request-Id and replaces an insane one", async () => {
    const sane = await call(url, "GET", "/v1/me", { key, headers: { "X-Request-Id": "client-123" } });
    expect(sane.headers.get("x-request-id")).toBe("client-123");
    const insane = await call(url, "GET", "/v1/nope", { headers: { "X-Request-Id": "bad id with spaces" } });
    expect(insane.headers.get("x-request-id")).toMatch(/^req_[0-9A-Za-z]{24}$/);
    expect(insane.body.error.requestId).toBe(insane.headers.get("x-request-id"));
  });

  it.runIf(available)("puts rate-limit headers on every authenticated response, errors included", async () => {
    const ok = await call(url, "GET", "/v1/me", { key });
    expect(Number(ok.headers.get("x-ratelimit-limit"))).toBe(100);
    expect(Number(ok.headers.get("x-ratelimit-remaining"))).toBeLessThan(100);
    const reset = Number(ok.headers.get("x-ratelimit-reset"));
    expect(reset).toBeGreaterThan(Date.now() / 1000);
    expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 60);
    const bad = await call(url, "GET", "/v1/contacts?includeBlocked=1", { key });
    expect(bad.status).toBe(400);
    expect(bad.headers.get("x-ratelimit-limit")).toBe("100");
  });

  it.runIf(available)("guards the admin API with the admin token, never an API key", async () => {
    expectError(await call(url, "GET", "/admin/v1/users?email=a@example.com"), 401, "unauthorized");
    expectError(await call(url, "GET", "/admin/v1/users?email=a@example.com", { key }), 401, "unauthorized");
    const found = await call(url, "GET", "/admin/v1/users?email=nobody@example.com", { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(found.status).toBe(200);
    expect(found.body).toEqual({ data: [] });
  });

  it.runIf(available)("answers health and readiness without authentication", async () => {
    expect((await call(url, "GET", "/healthz")).status).toBe(200);
    expect((await call(url, "GET", "/readyz")).status).toBe(200);
  });

  it.runIf(available)("gives a fast 503 when the contacts service is stopped, and recovers", async () => {
    await sys.system.stopService("contacts");
    try {
      const started = Date.now();
      const res = await call(url, "GET", "/v1/contacts", { key });
      expectError(res, 503, "service_unavailable");
      expect(res.headers.get("retry-after")).toBe("1");
      expect(Date.now() - started).toBeLessThan(1_000);
    } finally {
      await sys.system.startService("contacts");
    }
    expect((await call(url, "GET", "/v1/contacts", { key })).status).toBe(200);
  });
});
