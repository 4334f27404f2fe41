import { ERROR_STATUS, errorDocUrl, errorSectionAnchor, isRedirect, publicRoutes, type ErrorCode, type RouteDef } from "@sched/proto";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { describe, expect, it } from "vitest";
import { buildOpenApiDocument, OPENAPI_JSON_PATH } from "../src/index.js";
import { EXAMPLES } from "../src/examples.js";

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
// The document is plain JSON; tests walk it freely.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const document: Json = buildOpenApiDocument();
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(document, "openapi.json", undefined, false);

const pointer = (...parts: Array<string | number>) => `#/${parts.map((p) => String(p).replace(/~/g, "~0").replace(/\//g, "~1")).join("/")}`;
const templated = (route: RouteDef) => route.path.replace(/:(\w+)/g, "{$1}");
const operationOf = (route: RouteDef) => document.paths[templated(route)][route.method.toLowerCase()];
const resolve = (value: Json): Json =>
  value?.$ref ? value.$ref.slice(2).split("/").reduce((node: Json, part: string) => node[part.replace(/~1/g, "/").replace(/~0/g, "~")], document) : value;

function schemaErrors(schemaPointer: string, value: unknown): string | undefined {
  const validate = ajv.getSchema(`openapi.json${schemaPointer}`) ?? ajv.compile({ $ref: `openapi.json${schemaPointer}` });
  return validate(value) ? undefined : ajv.errorsText(validate.errors);
}

describe("the OpenAPI document", () => {
  it("is OpenAPI 3.1 and describes every route of the gateway's table, and its own endpoint", () => {
    expect(document.openapi).toBe("3.1.0");
    const operations = Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item as object).map((m) => `${m.toUpperCase()} ${path}`));
    const expected = [...publicRoutes.map((r) => `${r.method} ${templated(r)}`), `GET ${OPENAPI_JSON_PATH}`];
    expect(operations.sort()).toEqual(expected.sort());
  });

  it("refuses a route that declares no responses rather than describing it wrongly", () => {
    const [route] = publicRoutes;
    expect(() => buildOpenApiDocument([{ ...route!, responses: {} }])).toThrow(/declares no responses/);
  });

  it("gives every operation a unique operationId, a tag the document defines, and its security", () => {
    const tags = new Set(document.tags.map((t: { name: string }) => t.name));
    const ids = new Set<string>();
    for (const route of publicRoutes) {
      const op = operationOf(route);
      expect(ids.has(op.operationId)).toBe(false);
      ids.add(op.operationId);
      expect(tags.has(op.tags[0])).toBe(true);
      expect(op.security).toEqual(route.auth === "none" ? [] : [route.auth === "admin" ? { adminToken: [] } : { apiKey: [] }]);
      if (route.auth === "admin") expect(op.tags).toEqual(["Admin"]);
    }
    expect(operationOf(publicRoutes.find((r) => r.path === "/v1/meetings" && r.method === "GET")!).operationId).toBe("meetingsList");
    expect(document.paths[OPENAPI_JSON_PATH].get.security).toEqual([]);
  });

  it("documents path and query parameters from the request schemas, with the header parameters", () => {
    const list = operationOf(publicRoutes.find((r) => r.path === "/v1/meetings" && r.method === "GET")!);
    const params = list.parameters.map(resolve);
    expect(params.map((p: { name: string }) => p.name).sort()).toEqual(["X-Request-Id", "filter", "from", "limit", "startingAfter", "to"]);
    const limit = params.find((p: { name: string }) => p.name === "limit");
    expect(limit.schema).toEqual({ type: "integer", minimum: 1, maximum: 100, default: 20, description: expect.any(String) });
    const get = operationOf(publicRoutes.find((r) => r.path === "/v1/meetings/:id")!);
    expect(get.parameters.map(resolve).find((p: { in: string }) => p.in === "path")).toMatchObject({ name: "id", required: true });
    for (const route of publicRoutes) {
      const names = operationOf(route).parameters.map((p: Json) => resolve(p).name);
      expect(names.includes("Idempotency-Key")).toBe(route.idempotent === true);
      expect(names).toContain("X-Request-Id");
    }
  });

  it("lists each error status with exactly the codes of that status, each with its example", () => {
    for (const route of publicRoutes) {
      const op = operationOf(route);
      for (const [status, response] of Object.entries(op.responses) as Array<[string, Json]>) {
        if (Number(status) < 400) continue;
        const media = response.content["application/json"];
        const refs: Array<{ $ref: string }> = media.schema.anyOf ?? [media.schema];
        const codes = refs.map((ref) => resolve(ref).properties.error.properties.code.enum[0] as ErrorCode);
        for (const code of codes) expect(ERROR_STATUS[code]).toBe(Number(status));
        expect(Object.keys(media.examples).sort()).toEqual([...codes].sort());
        // Each example against its code's member of the response's anyOf (the refs above): valid there is valid against the whole, and each member compiles once.
        for (const [i, code] of codes.entries()) expect(schemaErrors(refs[i]!.$ref, resolve(media.examples[code]).value)).toBeUndefined();
      }
      const statuses = Object.keys(op.responses).map(Number);
      expect(statuses).toEqual(expect.arrayContaining(route.auth === "none" ? [400, 500, 503] : [400, 401, 500, 503]));
      if (route.auth === "api-key") expect(statuses).toEqual(expect.arrayContaining([403, 429]));
      if (route.hasBody) expect(statuses).toEqual(expect.arrayContaining([413, 415]));
      if (route.idempotent) expect(statuses).toEqual(expect.arrayContaining([409, 422]));
    }
    const update = operationOf(publicRoutes.find((r) => r.path === "/v1/meetings/:id" && r.method === "PATCH")!);
    expect(Object.keys(update.responses["400"].content["application/json"].examples).sort()).toEqual(["invalid_json", "invalid_request", "meeting_cancelled", "meeting_ended"]);
  });

  it("has a section of the reference per error code, where every error's docUrl points", () => {
    // The reference page makes an anchor of each level-1 and level-2 heading of the introduction: `section/<h1>/<h2>`.
    const anchors = new Set<string>();
    let top: string | undefined;
    for (const [, hashes, name] of (document.info.description as string).matchAll(/^(#{1,2}) (.+)$/gm)) {
      if (hashes === "#") top = name;
      else if (top) anchors.add(`section/${top}/${name}`);
    }
    for (const code of Object.keys(ERROR_STATUS) as ErrorCode[]) {
      expect(anchors, code).toContain(errorSectionAnchor(code));
      expect(errorDocUrl(code)).toBe(`/docs#${errorSectionAnchor(code)}`);
      expect(errorDocUrl(code, "https://api.example.com/scheduling")).toBe(`https://api.example.com/scheduling/docs#${errorSectionAnchor(code)}`);
    }
  });

  it("puts the rate-limit headers on API-key responses (optional where the edge may refuse first), Retry-After on 429 and 503 (and, optional, on an idempotent operation's 409), and X-Request-Id on every response", () => {
    for (const route of publicRoutes) {
      for (const [status, response] of Object.entries(operationOf(route).responses) as Array<[string, Json]>) {
        const headers = Object.fromEntries(Object.entries(response.headers).map(([name, h]) => [name, resolve(h)])) as Record<string, Json>;
        expect(headers["X-Request-Id"].required).toBe(true);
        // 400 (no Host), 408, 414 and 431 come from the edge before a key is read; 429, 500 and 503 may come from the key check.
        const counted = route.auth === "api-key" && !["400", "401", "408", "414", "429", "431", "500", "503"].includes(status);
        if (route.auth !== "api-key" || status === "401") expect(headers["X-RateLimit-Limit"]).toBeUndefined();
        else expect(headers["X-RateLimit-Limit"].required).toBe(counted);
        const retryAfter = status === "429" || status === "503" ? true : route.idempotent && status === "409" ? false : undefined;
        expect(headers["Retry-After"]?.required).toBe(retryAfter);
      }
    }
  });

  it("documents the edge's refusals on its own operation too, which can meet any request", () => {
    const responses = (document.paths as Record<string, Json>)["/v1/openapi.json"].get.responses as Record<string, Json>;
    expect(Object.keys(responses).sort()).toEqual(["200", "400", "408", "414", "431", "500"]);
    expect(Object.keys(responses["431"].headers)).toEqual(["X-Request-Id"]);
  });

  it("closes every response body: a field the document does not name is invalid", () => {
    expect(document.components.schemas.Meeting.additionalProperties).toBe(false);
    expect(document.components.schemas.MeetingList.additionalProperties).toBe(false);
    const meeting = EXAMPLES["GET /v1/meetings/:id"]!.responses[200] as Record<string, unknown>;
    expect(schemaErrors("#/components/schemas/Meeting", meeting)).toBeUndefined();
    expect(schemaErrors("#/components/schemas/Meeting", { ...meeting, secret: 1 })).toMatch(/additional properties/);
    const listItem = (EXAMPLES["GET /v1/meetings"]!.responses[200] as { data: object[] }).data[0];
    expect(schemaErrors("#/components/schemas/MeetingListItem", { ...listItem, description: "" })).toMatch(/additional properties/);
  });

  it("has an example for every request body and every success body, each valid against its schema", () => {
    expect(Object.keys(EXAMPLES).sort()).toEqual(publicRoutes.map((r) => `${r.method} ${r.path}`).sort());
    for (const route of publicRoutes) {
      const key = `${route.method} ${route.path}`;
      const examples = EXAMPLES[key]!;
      const base = ["paths", templated(route), route.method.toLowerCase()] as const;
      if (route.hasBody) {
        expect(examples.request, key).toBeDefined();
        expect(schemaErrors(pointer(...base, "requestBody", "content", "application/json", "schema"), examples.request), key).toBeUndefined();
      }
      for (const [status, body] of Object.entries(route.endpoint.replies)) {
        if (!body || isRedirect(body)) continue;
        const value = examples.responses[Number(status)];
        expect(value, `${key} ${status}`).toBeDefined();
        // JSON, but for a bare string answered as plain text (Graph's handshake).
        const type = typeof value === "string" ? "text/plain" : "application/json";
        expect(operationOf(route).responses[status].content[type].example).toEqual(value);
        expect(schemaErrors(pointer(...base, "responses", status, "content", type, "schema"), value), key).toBeUndefined();
      }
    }
  });

  it("describes request bodies as clients send them: defaults are optional, unknown fields refused", () => {
    const recommend = operationOf(publicRoutes.find((r) => r.path === "/v1/availability/recommended")!);
    const body = recommend.requestBody.content["application/json"].schema;
    expect(body.required.sort()).toEqual(["duration", "participants"]);
    expect(body.additionalProperties).toBe(false);
    expect(body.properties.timeRange.default).toBe("any");
    expect(recommend.requestBody.required).toBe(true);
  });

  it("describes a redirect as a Location header without a body", () => {
    const callback = operationOf(publicRoutes.find((r) => r.path === "/v1/calendar-connections/google/callback")!);
    expect(callback.responses["303"].headers.Location).toEqual({ $ref: "#/components/headers/Location" });
    expect(callback.responses["303"].content).toBeUndefined();
    expect(callback.responses["200"].content["application/json"].schema).toBeDefined();
  });
});
