import { bind, MemoryBus } from "@sched/bus";
import { createLogger } from "@sched/logging";
import { buildOpenApiDocument } from "@sched/openapi";
import { contactsList, publicRoutes, route as routeDef, type AnswerOf } from "@sched/proto";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { createGatewayApp } from "../src/inbound/http/app.js";
import { Authenticator } from "../src/outbound/keys/authenticator.js";
import { GATEWAY_DEFAULTS } from "../src/service.js";
import { deprecationHeaders } from "../src/domain/deprecation.js";
import { MemoryIdempotencyStore } from "../src/outbound/idempotency/store.js";
import { RateLimits } from "../src/outbound/rateLimits.js";

const logger = createLogger({ name: "deprecation-test", level: "silent" });
const deprecation = { since: "2027-01-01", sunset: "2028-01-01", link: "https://api.example.com/docs/migrate-contacts" };

describe("announcing a deprecated route (docs/versioning.md)", () => {
  it("gives Deprecation as Unix seconds, Sunset as an HTTP date and the guide as a Link", () => {
    expect(deprecationHeaders(deprecation)).toEqual({
      Deprecation: "@1798761600",
      Sunset: "Sat, 01 Jan 2028 00:00:00 GMT",
      Link: '<https://api.example.com/docs/migrate-contacts>; rel="deprecation"',
    });
  });

  it("refuses a sunset less than twelve months after the deprecation, and days that are not days", () => {
    expect(() => deprecationHeaders({ ...deprecation, sunset: "2027-12-31" })).toThrow(/12 months/);
    expect(() => deprecationHeaders({ ...deprecation, since: "2027-02-30" })).toThrow(/not a YYYY-MM-DD day/);
  });

  it("keeps the policy for every route deprecated today", () => {
    for (const route of publicRoutes.filter((r) => r.deprecation)) expect(() => deprecationHeaders(route.deprecation!), `${route.method} ${route.path}`).not.toThrow();
  });

  it("puts the headers on every answer of the route, errors included, and marks it in the OpenAPI document", async () => {
    const route = routeDef({ method: "GET", path: "/v1/old-contacts", endpoint: contactsList, operationId: "contactsList", auth: "none", hasBody: false, summary: "The contacts, the old way", responses: { 200: "Contacts" }, deprecation });
    const bus = new MemoryBus(logger);
    let status = 200;
    // Set to 404 below, a status the contract does not declare: the answer is then an error.
    await bus.serve({ name: "contacts", version: "1.0.0" }, [bind(contactsList, async () => ({ status, body: { data: [] } }) as AnswerOf<typeof contactsList>)]);
    const app = createGatewayApp({
      bus,
      logger,
      routes: [route],
      authenticator: new Authenticator(bus, { cacheTtlMs: 1_000, timeoutMs: 1_000 }),
      rateLimits: new RateLimits({ standardPerMinute: 100, aiPerMinute: 10, authFailuresPerMinute: 30, windowSeconds: 60 }, { keyPrefix: "deprecation-test" }),
      adminToken: "adm_deprecation_test_token",
      busTimeoutMs: 1_000,
      trustProxy: "false",
      idempotency: new MemoryIdempotencyStore(),
      edge: GATEWAY_DEFAULTS,
    });
    const answered = await request(app).get("/v1/old-contacts");
    expect(answered.status).toBe(200);
    expect([answered.headers.deprecation, answered.headers.sunset, answered.headers.link]).toEqual(["@1798761600", "Sat, 01 Jan 2028 00:00:00 GMT", `<${deprecation.link}>; rel="deprecation"`]);
    status = 404;
    expect((await request(app).get("/v1/old-contacts")).headers.deprecation).toBe("@1798761600");
    expect((await request(app).get("/v1/old-contacts").query({ includeBlocked: "maybe" })).headers.deprecation).toBe("@1798761600");
    await bus.close();

    const operation = (buildOpenApiDocument([route]) as { paths: Record<string, { get: { deprecated?: boolean; description: string } }> }).paths["/v1/old-contacts"]!.get;
    expect(operation.deprecated).toBe(true);
    expect(operation.description).toContain("may stop answering after 2028-01-01");
    const current = (buildOpenApiDocument([{ ...route, deprecation: undefined }]) as { paths: Record<string, { get: { deprecated?: boolean } }> }).paths["/v1/old-contacts"]!.get;
    expect(current.deprecated).toBeUndefined();
  });
});
