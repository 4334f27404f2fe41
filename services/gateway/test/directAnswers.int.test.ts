import { bind, MemoryBus } from "@sched/bus";
import { createLogger } from "@sched/logging";
import { contactsDelete, contactsList, route as routeDef, type AnswerOf } from "@sched/proto";
import { createServer, request, type IncomingHttpHeaders, type Server } from "node:http";
import express from "express";
import { afterAll, beforeAll, describe, expect, it, vi, type MockInstance } from "vitest";
import { createGatewayApp } from "../src/inbound/http/app.js";
import { Authenticator } from "../src/outbound/keys/authenticator.js";
import { MemoryIdempotencyStore } from "../src/outbound/idempotency/store.js";
import { RateLimits } from "../src/outbound/rateLimits.js";
import { GATEWAY_DEFAULTS } from "../src/service.js";

const logger = createLogger({ name: "direct-answers-test", level: "silent" });

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * API requests are answered without express when tracing is off; a URL
 * with a fragment (`#`), which express parses in full, still goes through
 * it. Each request below is sent both ways: the answers must be the same,
 * byte for byte, but for the request id and the date.
 */
describe("API answers without express and through it", () => {
  let server: Server;
  let bus: MemoryBus;
  let port: number;
  /** express's request handling, copied onto each app it makes: counts the requests express carried. */
  let expressHandled: MockInstance;

  beforeAll(async () => {
    bus = new MemoryBus(logger);
    await bus.serve({ name: "contacts", version: "1.0.0" }, [
      bind(contactsList, async () => ({ status: 200, body: { data: [] }, headers: { "X-Answer": "listed" } }) as AnswerOf<typeof contactsList>),
      bind(contactsDelete, async () => ({ status: 204 }) as AnswerOf<typeof contactsDelete>),
    ]);
    const routes = [
      routeDef({ method: "GET", path: "/v1/things", endpoint: contactsList, operationId: "thingsList", auth: "none", hasBody: false, summary: "Things", responses: { 200: "Things" } }),
      routeDef({ method: "POST", path: "/v1/things", endpoint: contactsList, operationId: "thingsCreate", auth: "none", hasBody: true, summary: "A thing", responses: { 200: "Things" } }),
      routeDef({ method: "DELETE", path: "/v1/things/:id", endpoint: contactsDelete, operationId: "thingsDelete", auth: "none", hasBody: false, summary: "No thing", responses: { 204: "Gone" } }),
      routeDef({ method: "GET", path: "/v1/keyed", endpoint: contactsList, operationId: "keyedList", auth: "api-key", scope: "contacts:read", bucket: "standard", hasBody: false, summary: "Keyed", responses: { 200: "Things" } }),
    ];
    // `handle` is express's own, outside its published types.
    expressHandled = vi.spyOn(express.application as unknown as { handle: (...args: unknown[]) => void }, "handle");
    const handler = createGatewayApp({
      bus,
      logger,
      routes,
      authenticator: new Authenticator(bus, { cacheTtlMs: 1_000, timeoutMs: 1_000 }),
      rateLimits: new RateLimits({ standardPerMinute: 100, aiPerMinute: 10, authFailuresPerMinute: 30, windowSeconds: 60 }, { keyPrefix: `direct-answers-${process.pid}` }),
      adminToken: "adm_direct_answers_test",
      busTimeoutMs: 2_000,
      trustProxy: "false",
      idempotency: new MemoryIdempotencyStore(),
      edge: { ...GATEWAY_DEFAULTS, maxUrlBytes: 200 },
    });
    server = createServer(handler);
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    port = (server.address() as { port: number }).port;
  });

  afterAll(async () => {
    await new Promise((done) => server.close(done));
    await bus.close();
    expressHandled.mockRestore();
  });

  const send = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
    new Promise<Answer>((resolve, reject) => {
      const req = request({ port, host: "127.0.0.1", method, path, headers, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
      });
      req.on("error", reject);
      req.end(body);
    });

  /** The answer without what differs between any two requests: its id (in the header and the envelope), its date and what is left of the address's allowance. */
  const comparable = ({ status, headers, body }: Answer) => {
    const id = headers["x-request-id"] as string;
    const { date: _date, "x-request-id": _id, "x-ratelimit-remaining": remaining, "x-ratelimit-reset": reset, ...rest } = headers;
    return { status, headers: rest, counted: [remaining !== undefined, reset !== undefined], body: body.replaceAll(id, "<id>") };
  };

  const json = { "content-type": "application/json" };
  const cases: Array<[string, number, string, string, Record<string, string>?, string?]> = [
    ["a JSON reply with the service's headers", 200, "GET", "/v1/things?includeBlocked=true"],
    ["a query the service refuses", 400, "GET", "/v1/things?includeBlocked=true&includeBlocked=false&y"],
    ["HEAD of it", 200, "HEAD", "/v1/things"],
    ["an empty reply", 204, "DELETE", "/v1/things/thg_1"],
    ["an unknown route", 404, "GET", "/v1/nothing/here"],
    ["a method the route lacks", 405, "PUT", "/v1/things"],
    ["a cross-origin preflight", 403, "OPTIONS", "/v1/things", { origin: "https://example.com", "access-control-request-method": "GET" }],
    ["a missing key", 401, "GET", "/v1/keyed"],
    ["a key that is no key", 401, "GET", "/v1/keyed", { authorization: "Bearer nonsense" }],
    ["a body that is not JSON", 400, "POST", "/v1/things", json, "{nope"],
    ["a body of another type", 415, "POST", "/v1/things", { "content-type": "text/plain" }, "hello"],
    ["a body too large", 413, "POST", "/v1/things", json, JSON.stringify({ a: "x".repeat(110 * 1024) })],
    ["a body too deep", 400, "POST", "/v1/things", json, "[".repeat(40) + "]".repeat(40)],
    ["a number too large", 400, "POST", "/v1/things", json, '{"n":1e309}'],
    ["a body the service refuses", 400, "POST", "/v1/things", json, '{"a":1}'],
    ["a conditional request", 200, "GET", "/v1/things", { "if-none-match": "*" }],
    ["a URL too long", 414, "GET", `/v1/things?q=${"x".repeat(300)}`],
  ];

  for (const [what, status, method, path, headers, body] of cases) {
    it(`answers ${what} alike`, async () => {
      const before = expressHandled.mock.calls.length;
      const direct = await send(method, path, headers, body);
      expect(expressHandled.mock.calls.length).toBe(before);
      // parseurl's full parse drops the fragment: the same path and query.
      const viaExpress = await send(method, `${path}#through-express`, headers, body);
      expect(expressHandled.mock.calls.length).toBe(before + 1);
      expect([direct.status, direct.headers["x-request-id"]]).toEqual([status, expect.stringMatching(/^req_/)]);
      expect(comparable(direct)).toEqual(comparable(viaExpress));
    });
  }

  it("counts a client by its socket's address, whatever X-Forwarded-For says, when no proxy is trusted", async () => {
    const first = await send("GET", "/v1/things", { "x-forwarded-for": "10.9.9.1" });
    const second = await send("GET", "/v1/things", { "x-forwarded-for": "10.9.9.2" });
    const viaExpress = await send("GET", "/v1/things#through-express", { "x-forwarded-for": "10.9.9.3" });
    const remaining = [first, second, viaExpress].map((a) => Number(a.headers["x-ratelimit-remaining"]));
    expect(remaining).toEqual([remaining[0], remaining[0]! - 1, remaining[0]! - 2]);
  });
});
