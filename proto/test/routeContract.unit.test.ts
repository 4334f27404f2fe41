import { describe, expect, it } from "vitest";
import { z } from "zod";
import { contactsDelete, contactsGet, Empty, httpRequest, NoBody, publicRoutes, route, routeEndpoint, type ReplyOf } from "../src/index.js";

const base = { method: "GET", path: "/v1/things/:id", auth: "api-key", scope: "contacts:read", bucket: "standard", hasBody: false, summary: "A thing" } as const;

describe("a route's contract", () => {
  it("describes exactly the answers its endpoint declares, each once", () => {
    for (const r of publicRoutes) {
      expect(Object.keys(r.responses).sort(), `${r.method} ${r.path}`).toEqual(Object.keys(r.endpoint.replies).sort());
      expect(r.endpoint.kind, r.operationId).toBe("route");
    }
    expect(new Set(publicRoutes.map((r) => r.operationId)).size).toBe(publicRoutes.length);
  });

  it("refuses, when compiled, a description of an undeclared answer or a declared answer left undescribed", () => {
    const routes = [
      route({ ...base, endpoint: contactsGet, operationId: "thingsGet", responses: { 200: "The thing" } }),
      // @ts-expect-error GET /v1/contacts/:id answers 200, not 201
      route({ ...base, endpoint: contactsGet, operationId: "thingsGet", responses: { 201: "The thing" } }),
      // @ts-expect-error the 204 is left undescribed
      route({ ...base, method: "DELETE", endpoint: contactsDelete, operationId: "thingsDelete", responses: {} }),
    ];
    expect(routes).toHaveLength(3);
  });

  it("types a requester's reply by the declared statuses and bodies", () => {
    const things = routeEndpoint("things.v1.http.get", httpRequest({ params: Empty, query: Empty, body: NoBody }), { 200: z.object({ n: z.number() }), 202: null });
    const reply = { status: 200, body: { n: 1 } } as ReplyOf<typeof things>;
    if (reply.status === 200) {
      const n: number = reply.body.n;
      expect(n).toBe(1);
    }
    // @ts-expect-error a 202 has no body
    const accepted: ReplyOf<typeof things> = { status: 202, body: { n: 1 } };
    // @ts-expect-error 200 carries the declared body
    const wrong: ReplyOf<typeof things> = { status: 200, body: { n: "1" } };
    expect([accepted.status, wrong.status]).toEqual([202, 200]);
    expect(things).toMatchObject({ kind: "route", replies: { 200: expect.anything(), 202: null } });
  });
});
