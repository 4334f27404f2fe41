import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, call, createUserWithKey, expectError, perSuite, startTestSystem, WIRINGS, type ApiResponse, type TestSystem } from "../harness.js";

// Long enough for a burst of 31 requests on a busy machine; a test waits only as long as its Retry-After says.
const WINDOW_SECONDS = 15;
const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Waits out a 429: as long as its Retry-After says. */
const honour = (refused: ApiResponse) => sleep(Number(refused.headers.get("retry-after")) * 1000);
/** Limits per client address are the X-Forwarded-For's (the system trusts it): each test plays its own client. */
const from = (address: string) => ({ "X-Forwarded-For": address });

function limitHeaders(res: ApiResponse) {
  return {
    limit: Number(res.headers.get("x-ratelimit-limit")),
    remaining: Number(res.headers.get("x-ratelimit-remaining")),
    reset: Number(res.headers.get("x-ratelimit-reset")),
  };
}

function expectLimitHeaders(res: ApiResponse, limit: number): void {
  for (const name of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]) {
    expect(res.headers.get(name), `${name} on ${res.status}`).toMatch(/^\d+$/);
  }
  expect(limitHeaders(res).limit).toBe(limit);
}

const RECOMMEND_BODY = { participants: ["someone@example.com"], duration: "30 mins", from: "2030-03-04", to: "2030-03-04" };

// A window shorter than a minute keeps Retry-After within a test's patience; the counting is the same as per minute.
// Every test counts on a key or client address of its own, so the tests (and the two wirings) run at once: their
// waits for a window to end overlap instead of adding up.
describe.concurrent.each(WIRINGS)("rate limits per API key (%s)", async (wiring) => {
  let sys: TestSystem;
  let url: string;
  const { available } = await perSuite(wiring, async () => {
    sys = await startTestSystem(wiring, { standardPerMinute: 8, aiPerMinute: 3, rateWindowSeconds: WINDOW_SECONDS, trustProxy: "true" });
    url = sys.url;
    return sys;
  });

  const setLimits = (keyId: string, rateLimits: Record<string, number | null>) =>
    call(url, "PATCH", `/admin/v1/api-keys/${keyId}`, { headers: admin, body: { rateLimits } });

  it.runIf(available)("refuses past the limit with 429, Remaining 0 and Retry-After, and a request honouring Retry-After succeeds", async () => {
    const { key } = await createUserWithKey(url);
    const answers: ApiResponse[] = [];
    for (let i = 0; i < 10; i++) answers.push(await call(url, "GET", "/v1/me", { key }));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 429, 429]);
    expect(answers.slice(0, 8).map((a) => limitHeaders(a).remaining)).toEqual([7, 6, 5, 4, 3, 2, 1, 0]);
    const refused = answers[9]!;
    expectError(refused, 429, "rate_limited");
    expectLimitHeaders(refused, 8);
    expect(limitHeaders(refused).remaining).toBe(0);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_SECONDS);
    // Reset is when the window ends, and Retry-After points there.
    expect(Math.abs(limitHeaders(refused).reset - (Math.floor(Date.now() / 1000) + retryAfter))).toBeLessThanOrEqual(1);

    await honour(refused);
    const retried = await call(url, "GET", "/v1/me", { key });
    expect(retried.status).toBe(200);
    expect(limitHeaders(retried).remaining).toBe(7);
  });

  it.runIf(available)("counts the recommended endpoint in its own bucket, apart from the standard one", async () => {
    const { key } = await createUserWithKey(url);
    const recommended: ApiResponse[] = [];
    for (let i = 0; i < 4; i++) recommended.push(await call(url, "POST", "/v1/availability/recommended", { key, body: RECOMMEND_BODY }));
    expect(recommended.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    recommended.forEach((r) => expectLimitHeaders(r, 3));
    const standard = await call(url, "GET", "/v1/me", { key });
    expect(standard.status).toBe(200);
    expect(limitHeaders(standard)).toMatchObject({ limit: 8, remaining: 7 });
  });

  it.runIf(available)("limits each key on its own, even two keys of one user", async () => {
    const first = await createUserWithKey(url);
    const admin2 = await call(url, "POST", `/admin/v1/users/${first.userId}/api-keys`, { headers: admin, body: { mode: "test" } });
    const second: string = admin2.body.key;
    for (let i = 0; i < 8; i++) expect((await call(url, "GET", "/v1/me", { key: first.key })).status).toBe(200);
    expectError(await call(url, "GET", "/v1/me", { key: first.key }), 429, "rate_limited");
    const other = await call(url, "GET", "/v1/me", { key: second });
    expect(other.status).toBe(200);
    expect(limitHeaders(other).remaining).toBe(7);
  });

  it.runIf(available)("puts the headers on authenticated errors too: 404, 400 and 403", async () => {
    const { key } = await createUserWithKey(url);
    const limited = await createUserWithKey(url, { scopes: ["contacts:read"] });
    const notFound = await call(url, "GET", "/v1/meetings/mtg_000000000000000000000000", { key });
    expectError(notFound, 404, "not_found");
    expectLimitHeaders(notFound, 8);
    const invalid = await call(url, "GET", "/v1/meetings?limit=0", { key });
    expectError(invalid, 400, "invalid_request");
    expectLimitHeaders(invalid, 8);
    const forbidden = await call(url, "GET", "/v1/me", { key: limited.key });
    expectError(forbidden, 403, "forbidden");
    expectLimitHeaders(forbidden, 8);
    expect(limitHeaders(invalid).remaining).toBe(limitHeaders(notFound).remaining - 1);
  });

  it.runIf(available)("applies a key's own limits set by the admin API, per bucket, and null returns to the default", async () => {
    const { key, keyId } = await createUserWithKey(url);
    const set = await setLimits(keyId, { standardPerMinute: 2, aiPerMinute: 5 });
    expect(set.status).toBe(200);
    expect(set.body.rateLimits).toEqual({ standardPerMinute: 2, aiPerMinute: 5 });
    // Every gateway replica is told, so the new limit holds at once.
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await call(url, "GET", "/v1/me", { key })).status);
    expect(statuses).toEqual([200, 200, 429]);
    const ai = await call(url, "POST", "/v1/availability/recommended", { key, body: RECOMMEND_BODY });
    expectLimitHeaders(ai, 5);

    // A larger grant applies to the window already counted.
    await setLimits(keyId, { standardPerMinute: 20 });
    const granted = await call(url, "GET", "/v1/me", { key });
    expect(granted.status).toBe(200);
    expect(limitHeaders(granted)).toMatchObject({ limit: 20, remaining: 16 });

    await setLimits(keyId, { standardPerMinute: null, aiPerMinute: null });
    expectLimitHeaders(await call(url, "GET", "/v1/me", { key }), 8);
  });

  it.runIf(available)("refuses bad limits with 400 naming the field, and an unknown key with 404", async () => {
    const { keyId } = await createUserWithKey(url);
    const zero = await setLimits(keyId, { standardPerMinute: 0 });
    expectError(zero, 400, "invalid_request");
    expect(zero.body.error.param).toBe("rateLimits.standardPerMinute");
    expectError(await call(url, "PATCH", `/admin/v1/api-keys/${keyId}`, { headers: admin, body: { limits: {} } }), 400, "invalid_request");
    expectError(await setLimits("key_000000000000000000000000", { standardPerMinute: 5 }), 404, "not_found");
    const { key } = await createUserWithKey(url);
    expectError(await call(url, "PATCH", `/admin/v1/api-keys/${keyId}`, { key, body: { rateLimits: {} } }), 401, "unauthorized");
  });

  it.runIf(available)("limits the one route without a key (the OAuth callback) per client address", async () => {
    const answers: ApiResponse[] = [];
    for (let i = 0; i < 9; i++) answers.push(await call(url, "GET", "/v1/calendar-connections/google/callback?state=nope&code=nope", { headers: from("198.51.100.1") }));
    expect(answers.slice(0, 8).every((a) => a.status !== 429)).toBe(true);
    expectError(answers[8]!, 429, "rate_limited");
    expect(Number(answers[8]!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  });

  it.runIf(available)("limits failed authentication per client address, apart from valid keys", async () => {
    const client = from("198.51.100.2");
    // A key already resolved by the gateway takes the shorter path (its checks in one round trip); it is refused all the same.
    const earlier = await createUserWithKey(url);
    expect((await call(url, "GET", "/v1/me", { key: earlier.key, headers: client })).status).toBe(200);
    const { key } = await createUserWithKey(url);
    // The auth-failure allowance is 30 a window: 30 wrong keys at once, then the 31st attempt from this address is refused.
    const wrong = await Promise.all(Array.from({ length: 30 }, (_, i) => call(url, "GET", "/v1/me", { key: `sk_test_${String(i).padStart(40, "x")}`, headers: client })));
    expect(wrong.map((r) => r.status)).toEqual(Array.from({ length: 30 }, () => 401));
    const refused = await call(url, "GET", "/v1/me", { key: "sk_test_".padEnd(48, "y"), headers: client });
    expectError(refused, 429, "rate_limited");
    expect((await call(url, "GET", "/v1/me", { key, headers: client })).status).toBe(429);
    expect((await call(url, "GET", "/v1/me", { key: earlier.key, headers: client })).status).toBe(429);
    // Another address is not held back by this one's failures.
    expect((await call(url, "GET", "/v1/me", { key, headers: from("198.51.100.3") })).status).toBe(200);
    await honour(refused);
    expect((await call(url, "GET", "/v1/me", { key, headers: client })).status).toBe(200);
    expect((await call(url, "GET", "/v1/me", { key: earlier.key, headers: client })).status).toBe(200);
  });

  it.runIf(available)("counts wrong admin tokens as failed authentication of the address, then refuses the right one too until the window ends", async () => {
    const find = (token: string) => call(url, "GET", "/admin/v1/users?email=nobody@example.com", { headers: { Authorization: `Bearer ${token}`, ...from("198.51.100.4") } });
    expect((await find(ADMIN_TOKEN)).status).toBe(200);
    const statuses = (await Promise.all(Array.from({ length: 30 }, (_, i) => find(`adm_guess_${String(i).padStart(21, "0")}`)))).map((r) => r.status);
    expect(statuses).toEqual(Array.from({ length: 30 }, () => 401));
    const guess = await find("adm_guess_one_more_000000000");
    expectError(guess, 429, "rate_limited");
    expect(Number(guess.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // The right token is refused as well, or a 429 would tell a wrong guess from a right one.
    expectError(await find(ADMIN_TOKEN), 429, "rate_limited");
    await honour(guess);
    expect((await find(ADMIN_TOKEN)).status).toBe(200);
  });
});
