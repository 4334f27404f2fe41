import { publicRoutes } from "@sched/proto";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUserWithKey, startTestSystem, type TestSystem } from "../harness.js";
import { rawRequest } from "../raw.js";

const METHODS = ["GET", "HEAD", "POST", "PATCH", "PUT", "DELETE", "OPTIONS", "TRACE", "PROPFIND", "get", "BREW", "M-SEARCH"];
const TEMPLATES = [...publicRoutes.map((r) => r.path), "/", "/v1", "/v2/meetings", "/healthz", "/readyz", "/docs", "/v1/openapi.json"];
const TOKEN_CHARS = fc.constantFrom(..."abcXYZ019-_.~!$&'()*+,;=:@".split(""));
const token = fc.string({ unit: TOKEN_CHARS, minLength: 1, maxLength: 20 });

/** A path segment as clients get them wrong: encoded unicode, broken escapes, dots, empty. */
const segment = fc.oneof(
  token,
  fc.string({ maxLength: 12 }).map(encodeURIComponent),
  fc.constantFrom("%", "%zz", "%E0%A4%A", "%00", "..", ".", "", "%2F", "mtg_000000000000000000000000", "ctc_000000000000000000000000"),
);

const path = fc.oneof(
  fc.tuple(fc.constantFrom(...TEMPLATES), fc.array(segment, { minLength: 4, maxLength: 4 })).map(([template, values]) => {
    let i = 0;
    return template.replace(/:(\w+)/g, () => values[i++] ?? "x");
  }),
  fc.array(segment, { maxLength: 5 }).map((parts) => `/${parts.join("/")}`),
);

const query = fc.oneof(
  fc.constant(""),
  fc.array(fc.tuple(fc.oneof(token, fc.constantFrom("limit", "filter", "startingAfter", "date", "includeBlocked", "a[b]", "a[]", "__proto__")), fc.oneof(token, segment)), { maxLength: 5 }).map(
    (pairs) => `?${pairs.map(([k, v]) => `${k}=${v}`).join("&")}`,
  ),
  fc.constantFrom("?", "?&&=&", "?limit=1&limit=2", "?filter=%ZZ", "?=x"),
);

const headerValue = fc.string({ unit: fc.constantFrom(..." abcXYZ019-_.,;=/\"'{}[]:".split("")), maxLength: 40 });

const body = fc.oneof(
  fc.constant(undefined),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 60 }),
  fc.record({ email: fc.oneof(fc.emailAddress(), token), title: fc.string(), startTime: fc.string(), duration: fc.string(), participants: fc.array(fc.string(), { maxLength: 3 }) }).map((v) =>
    JSON.stringify(v),
  ),
);

function request(key: string) {
  return fc.record({
    method: fc.constantFrom(...METHODS),
    target: fc.tuple(path, query).map(([p, q]) => `${p}${q}`),
    auth: fc.oneof(fc.constant<string | undefined>(undefined), fc.constant(`Bearer ${key}`), headerValue.map((v) => `Bearer ${v}`), headerValue),
    contentType: fc.oneof(fc.constant<string | undefined>(undefined), fc.constantFrom("application/json", "application/json; charset=latin1", "text/plain", "application/json; charset=utf-8"), headerValue),
    extraHeaders: fc.array(fc.tuple(fc.constantFrom("Idempotency-Key", "X-Request-Id", "Accept", "X-Forwarded-For", "Transfer-Encoding", "Expect", "X-Custom"), headerValue), { maxLength: 3 }),
    body,
  });
}

function serialize(r: { method: string; target: string; auth: string | undefined; contentType: string | undefined; extraHeaders: Array<[string, string]>; body: string | undefined }): Buffer {
  const bodyBytes = r.body === undefined ? undefined : Buffer.from(r.body, "utf8");
  const lines = [`${r.method} ${r.target} HTTP/1.1`, "Host: localhost", "Connection: close"];
  if (r.auth !== undefined) lines.push(`Authorization: ${r.auth}`);
  if (r.contentType !== undefined) lines.push(`Content-Type: ${r.contentType}`);
  for (const [name, value] of r.extraHeaders) if (name !== "Transfer-Encoding" || bodyBytes === undefined) lines.push(`${name}: ${value}`);
  if (bodyBytes !== undefined) lines.push(`Content-Length: ${bodyBytes.length}`);
  return Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1"), bodyBytes ?? Buffer.alloc(0)]);
}

describe("the HTTP edge under random requests", () => {
  let sys: TestSystem;
  let key: string;

  beforeAll(async () => {
    // Limits out of the way: the fuzz is about answers, not refusals.
    sys = await startTestSystem("standalone", { standardPerMinute: 1_000_000, aiPerMinute: 1_000_000, authFailuresPerMinute: 1_000_000 });
    ({ key } = await createUserWithKey(sys.url));
  });
  afterAll(async () => sys?.stop());

  it("never answers 500 or hangs, and every error is the envelope", async () => {
    await fc.assert(
      fc.asyncProperty(request(key), async (r) => {
        const answer = await rawRequest(sys.url, serialize(r), { timeoutMs: 8_000 });
        expect(answer.status, `${r.method} ${r.target} → ${answer.text}`).toBeGreaterThanOrEqual(200);
        expect(answer.status).toBeLessThan(600);
        expect(answer.status, `${r.method} ${r.target} → ${answer.text}`).not.toBe(500);
        if (answer.status >= 400 && r.method !== "HEAD") {
          expect(answer.headers["content-type"], answer.text).toMatch(/^application\/json/);
          expect(typeof answer.body?.error?.code, answer.text).toBe("string");
          expect(typeof answer.body.error.message).toBe("string");
          expect(answer.body.error.requestId).toBe(answer.headers["x-request-id"]);
          // Nothing of the inside: stack frames, file names, SQL, bus subjects or backing servers.
          expect(answer.text).not.toMatch(/\bat \S+ \(|node_modules|\.[jt]s:\d|\bselect\b.+\bfrom\b|(accounts|contacts|meetings|availability|ai-ranking|invites)\.v1\.|ECONNREFUSED|knex|pglite/i);
        }
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 300) },
    );
  }, 120_000);
});
