import { bind } from "@sched/bus";
import { contactsList, type ErrorCode } from "@sched/proto";
import { eventually } from "@sched/testing";
import { connect, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { createUserWithKey, expectDocumented, perSuite, startTestSystem, WIRINGS, type TestSystem } from "../harness.js";
import { rawRequest, type RawAnswer } from "../raw.js";

// Four places, two for one client; the client address is X-Forwarded-For's, so each test plays its own clients.
// A public base URL under a path: every refusal, the ones written straight to the socket included, links its documentation under it.
const LIMITS = {
  maxUrlBytes: 2_048,
  maxHeaderBytes: 8_192,
  headersTimeoutMs: 600,
  requestTimeoutMs: 1_200,
  maxInFlight: 4,
  inFlightSharePercent: 50,
  trustProxy: "true",
  publicBaseUrl: "https://api.example.com/scheduling",
};
const SHARE = 2;

function expectEnvelope(answer: RawAnswer, status: number, code: ErrorCode): void {
  expect(answer.status, answer.text).toBe(status);
  expect(answer.headers["content-type"]).toMatch(/^application\/json/);
  expect(answer.body?.error?.code).toBe(code);
  expect(answer.body.error.requestId).toBe(answer.headers["x-request-id"]);
  expect(answer.body.error.requestId).toMatch(/^req_/);
  expect(answer.body.error.docUrl).toBe(`https://api.example.com/scheduling/docs#section/Errors/${code}`);
  // Nothing of the inside: no stack frames, file names or SQL.
  expect(answer.text).not.toMatch(/\bat \S+ \(|node_modules|\.[jt]s:\d|\bstack\b|\bselect\b.*\bfrom\b|\binsert into\b/i);
}

/** The answer is one the OpenAPI document describes for the operation, headers included. */
function expectDocumentedAnswer(method: string, path: string, answer: RawAnswer): void {
  expectDocumented(method, path, { status: answer.status, headers: new Headers(answer.headers), body: answer.body });
}

/** A request whose body never finishes, holding whatever it holds at the gateway until the socket closes. */
interface StalledBody {
  socket: Socket;
  /** The gateway answered it (refused it): it holds no place. */
  answered(): boolean;
}

function stalledPost(url: string, key: string, address: string): Promise<StalledBody> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    let answered = false;
    const socket = connect({ host: hostname, port: Number(port) }, () => {
      socket.write(
        `POST /v1/contacts HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: ${address}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"em`,
      );
      resolve({ socket, answered: () => answered });
    });
    socket.on("data", () => (answered = true));
    socket.on("close", () => (answered = true));
    socket.on("error", () => undefined);
  });
}

/**
 * A whole request from `address` with `key`, read to its end. The client does
 * not half-close: Node gives up a request whose client has (httpAllowHalfOpen
 * is off), and these may wait at a service.
 */
function send(url: string, request: { method?: string; path: string; key: string; address: string; body?: string }): Promise<RawAnswer> {
  const body = request.body === undefined ? "" : `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(request.body)}\r\n\r\n${request.body}`;
  const head = `${request.method ?? "GET"} ${request.path} HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: ${request.address}\r\nAuthorization: Bearer ${request.key}\r\nConnection: close\r\n`;
  return rawRequest(url, `${head}${body || "\r\n"}`, { timeoutMs: 20_000, keepOpen: true });
}

/**
 * The contacts list served by a stand-in that holds every request until
 * released: requests that stay in progress at a service for as long as a
 * test needs.
 */
async function holdContactsList(sys: TestSystem) {
  await sys.system.stopService("contacts");
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let held = 0;
  const served = await sys.system.bus.serve({ name: "contacts", version: "0.0.0" }, [
    bind(contactsList, async () => {
      held++;
      await released;
      return { status: 200, body: { data: [] } };
    }),
  ]);
  return {
    held: () => held,
    release,
    async stop() {
      release();
      await served.stop();
      await sys.system.startService("contacts");
    },
  };
}

describe.each(WIRINGS)("the HTTP edge's limits (%s)", async (wiring) => {
  let sys: TestSystem;
  let key: string;
  const { available } = await perSuite(wiring, async () => {
    sys = await startTestSystem(wiring, LIMITS);
    ({ key } = await createUserWithKey(sys.url));
    return sys;
  });

  it.runIf(available)("refuses a URL over the limit with 414, and one just under it is routed", async () => {
    const long = `/v1/contacts?q=${"a".repeat(LIMITS.maxUrlBytes)}`;
    const tooLong = await rawRequest(sys.url, `GET ${long} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`);
    expectEnvelope(tooLong, 414, "uri_too_long");
    expectDocumentedAnswer("GET", long, tooLong);
    const fits = `/v1/nope/${"a".repeat(LIMITS.maxUrlBytes - 20)}`;
    expectEnvelope(await rawRequest(sys.url, `GET ${fits} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`), 404, "not_found");
  });

  it.runIf(available)("refuses headers over the limit with 431 and the envelope", async () => {
    for (const path of ["/v1/me", "/v1/openapi.json", "/admin/v1/users?email=a%40example.com"]) {
      const answer = await rawRequest(sys.url, `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nX-Filler: ${"b".repeat(LIMITS.maxHeaderBytes)}\r\nConnection: close\r\n\r\n`);
      expectEnvelope(answer, 431, "headers_too_large");
      // Refused before any key is read: no rate-limit headers, as the document says.
      expect(answer.headers["x-ratelimit-limit"]).toBeUndefined();
      expectDocumentedAnswer("GET", path, answer);
    }
  });

  it.runIf(available)("answers a client too slow to send its headers with 408 and closes the connection", async () => {
    const started = Date.now();
    const answer = await rawRequest(sys.url, "GET /v1/me HTTP/1.1\r\nHost: x\r\n", { keepOpen: true, timeoutMs: 5_000 });
    expectEnvelope(answer, 408, "request_timeout");
    expect(Date.now() - started).toBeGreaterThanOrEqual(LIMITS.headersTimeoutMs - 50);
  });

  it.runIf(available)("answers a client too slow to send its body with 408 and closes the connection", async () => {
    const answer = await rawRequest(
      sys.url,
      `POST /v1/contacts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"ema`,
      { keepOpen: true, timeoutMs: 6_000 },
    );
    expectEnvelope(answer, 408, "request_timeout");
  });

  it.runIf(available)("answers what is not HTTP with 400 and the envelope", async () => {
    expectEnvelope(await rawRequest(sys.url, "HELLO\r\n\r\n"), 400, "invalid_request");
    expectEnvelope(await rawRequest(sys.url, "GET /v1/me HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n"), 400, "invalid_request");
    expectEnvelope(await rawRequest(sys.url, "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"), 405, "method_not_allowed");
  });

  it.runIf(available)("gives one key and one address at most their share of the places in progress, others still get in, and all of them taken is a 503", async () => {
    const [other, third] = [await createUserWithKey(sys.url), await createUserWithKey(sys.url)];
    const contacts = await holdContactsList(sys);
    try {
      const list = (k: string, address: string) => send(sys.url, { path: "/v1/contacts", key: k, address });
      const admitted = [list(key, "10.1.0.1"), list(key, "10.1.0.2")];
      await eventually(() => contacts.held() === SHARE, 10_000);
      const keyPastShare = await list(key, "10.1.0.3");
      expectEnvelope(keyPastShare, 503, "service_unavailable");
      expect(keyPastShare.headers["retry-after"]).toBe("1");
      admitted.push(list(other.key, "10.1.0.1"));
      await eventually(() => contacts.held() === SHARE + 1, 10_000);
      expectEnvelope(await list(third.key, "10.1.0.1"), 503, "service_unavailable");
      admitted.push(list(third.key, "10.1.0.4"));
      await eventually(() => contacts.held() === LIMITS.maxInFlight, 10_000);
      const full = await list(third.key, "10.1.0.5");
      expectEnvelope(full, 503, "service_unavailable");
      expect(full.headers["retry-after"]).toBe("1");
      contacts.release();
      for (const answer of await Promise.all(admitted)) expect(answer.status, answer.text).toBe(200);
    } finally {
      await contacts.stop();
    }
    expect((await send(sys.url, { path: "/v1/me", key, address: "10.1.0.1" })).status).toBe(200);
  });

  it.runIf(available)("keeps bodies still being received out of the places in progress, and one key or address to its share of them", async () => {
    // A system of its own whose request time-out outlasts the test: the stalled bodies hold their places until the
    // test lets go of them, however slow the machine (under the suite's 1.2 s they could time out between two checks).
    const own = await startTestSystem(wiring, { ...LIMITS, requestTimeoutMs: 300_000 });
    const stalled: StalledBody[] = [];
    try {
      const someone = await createUserWithKey(own.url);
      const trickler = { address: "10.2.0.1", key: (await createUserWithKey(own.url)).key };
      const postFrom = (address: string, k: string) => send(own.url, { method: "POST", path: "/v1/contacts", key: k, address, body: "{}" });
      // Both keys known to the gateway first, so that a body's place waits on nothing but the body's bytes.
      for (const k of [someone.key, trickler.key]) expect((await send(own.url, { path: "/v1/me", key: k, address: "10.2.0.9" })).status).toBe(200);
      // The trickler's share of bodies, kept taken: a stalled body that lost the race for a place to a check below
      // is answered at once, and another one takes its turn.
      const refused = await eventually(async () => {
        for (const body of stalled.filter((s) => s.answered())) stalled.splice(stalled.indexOf(body), 1)[0]!.socket.destroy();
        while (stalled.length < SHARE) stalled.push(await stalledPost(own.url, trickler.key, trickler.address));
        const answer = await postFrom(trickler.address, trickler.key);
        return answer.status === 503 ? answer : undefined;
      }, 30_000, 100);
      expectEnvelope(refused, 503, "service_unavailable");
      expect(refused.headers["retry-after"]).toBe("1");
      expectEnvelope(await postFrom("10.2.0.3", trickler.key), 503, "service_unavailable");
      expectEnvelope(await postFrom(trickler.address, someone.key), 503, "service_unavailable");
      // Everyone else, and the trickler's own requests without a body, still get in.
      expect((await send(own.url, { path: "/v1/me", key: someone.key, address: "10.2.0.2" })).status).toBe(200);
      expect((await send(own.url, { path: "/v1/me", key: trickler.key, address: trickler.address })).status).toBe(200);
      expectEnvelope(await postFrom("10.2.0.2", someone.key), 400, "invalid_request");
      expect(stalled.some((s) => s.answered())).toBe(false);
      for (const body of stalled.splice(0)) body.socket.destroy();
      await eventually(async () => (await postFrom(trickler.address, trickler.key)).status === 400, 10_000);
    } finally {
      for (const body of stalled) body.socket.destroy();
      await own.stop();
    }
  });

  it.runIf(available)("answers a request already handed to a service with the service's answer, never 408, however long the service takes", async () => {
    const contacts = await holdContactsList(sys);
    try {
      // A route that takes no body, sent one that never ends: Node's request time-out runs while the service works.
      const answer = rawRequest(
        sys.url,
        `GET /v1/contacts HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 10.3.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Length: 50\r\n\r\n{"a`,
        { keepOpen: true, timeoutMs: 20_000 },
      );
      await eventually(() => contacts.held() === 1, 10_000);
      // Past the request time-out and two of Node's checks of it.
      await new Promise((r) => setTimeout(r, LIMITS.requestTimeoutMs + 2 * LIMITS.headersTimeoutMs));
      contacts.release();
      const answered = await answer;
      expect(answered.status, answered.text).toBe(200);
      expect(answered.body).toEqual({ data: [] });
      expect(answered.headers.connection).toBe("close");
    } finally {
      await contacts.stop();
    }
  });
});
