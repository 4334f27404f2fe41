import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUserWithKey, startTestSystem, type TestSystem } from "../harness.js";
import { rawRequest, type RawAnswer } from "../raw.js";

const LIMITS = { maxUrlBytes: 2_048, maxHeaderBytes: 8_192, headersTimeoutMs: 600, requestTimeoutMs: 1_200, maxInFlight: 3 };

function expectEnvelope(answer: RawAnswer, status: number, code: string): void {
  expect(answer.status, answer.text).toBe(status);
  expect(answer.headers["content-type"]).toMatch(/^application\/json/);
  expect(answer.body?.error?.code).toBe(code);
  expect(answer.body.error.requestId).toBe(answer.headers["x-request-id"]);
  expect(answer.body.error.requestId).toMatch(/^req_/);
  // Nothing of the inside: no stack frames, file names or SQL.
  expect(answer.text).not.toMatch(/\bat \S+ \(|node_modules|\.[jt]s:\d|\bstack\b|\bselect\b.*\bfrom\b|\binsert into\b/i);
}

/** A request whose body never finishes, holding its place at the gateway until the socket closes. */
function stalledPost(url: string, key: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => {
      socket.write(`POST /v1/contacts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"em`);
      resolve(socket);
    });
    socket.on("error", () => undefined);
  });
}

describe("the HTTP edge's limits", () => {
  let sys: TestSystem;
  let key: string;

  beforeAll(async () => {
    sys = await startTestSystem("standalone", LIMITS);
    ({ key } = await createUserWithKey(sys.url));
  });
  afterAll(async () => sys?.stop());

  it("refuses a URL over the limit with 414, and one just under it is routed", async () => {
    const long = `/v1/contacts?q=${"a".repeat(LIMITS.maxUrlBytes)}`;
    expectEnvelope(await rawRequest(sys.url, `GET ${long} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`), 414, "uri_too_long");
    const fits = `/v1/nope/${"a".repeat(LIMITS.maxUrlBytes - 20)}`;
    expectEnvelope(await rawRequest(sys.url, `GET ${fits} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`), 404, "not_found");
  });

  it("refuses headers over the limit with 431 and the envelope", async () => {
    const answer = await rawRequest(sys.url, `GET /v1/me HTTP/1.1\r\nHost: x\r\nX-Filler: ${"b".repeat(LIMITS.maxHeaderBytes)}\r\nConnection: close\r\n\r\n`);
    expectEnvelope(answer, 431, "headers_too_large");
  });

  it("answers a client too slow to send its headers with 408 and closes the connection", async () => {
    const started = Date.now();
    const answer = await rawRequest(sys.url, "GET /v1/me HTTP/1.1\r\nHost: x\r\n", { keepOpen: true, timeoutMs: 5_000 });
    expectEnvelope(answer, 408, "request_timeout");
    expect(Date.now() - started).toBeGreaterThanOrEqual(LIMITS.headersTimeoutMs - 50);
  });

  it("answers a client too slow to send its body with 408 and closes the connection", async () => {
    const answer = await rawRequest(
      sys.url,
      `POST /v1/contacts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"ema`,
      { keepOpen: true, timeoutMs: 6_000 },
    );
    expectEnvelope(answer, 408, "request_timeout");
  });

  it("answers what is not HTTP with 400 and the envelope", async () => {
    expectEnvelope(await rawRequest(sys.url, "HELLO\r\n\r\n"), 400, "invalid_request");
    expectEnvelope(await rawRequest(sys.url, "GET /v1/me HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n"), 400, "invalid_request");
    expectEnvelope(await rawRequest(sys.url, "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"), 405, "method_not_allowed");
  });

  it("refuses requests past the in-flight cap with a fast 503 and Retry-After, and serves again when they finish", async () => {
    const stalled = await Promise.all(Array.from({ length: LIMITS.maxInFlight }, () => stalledPost(sys.url, key)));
    try {
      await new Promise((r) => setTimeout(r, 100));
      const refused = await rawRequest(sys.url, `GET /v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`);
      expectEnvelope(refused, 503, "service_unavailable");
      expect(refused.headers["retry-after"]).toBe("1");
    } finally {
      stalled.forEach((s) => s.destroy());
    }
    await new Promise((r) => setTimeout(r, 100));
    const served = await rawRequest(sys.url, `GET /v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`);
    expect(served.status).toBe(200);
  });
});
