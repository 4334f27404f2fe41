import { endpoint, httpRequest, NoBody, publicRoutes, routeEndpoint } from "@sched/proto";
import { expect, it } from "vitest";
import { z } from "zod";

it("takes an endpoint for an HTTP route by the kind its contract declares, not by its subject's spelling", () => {
  for (const route of publicRoutes) expect(route.endpoint.kind, route.endpoint.subject).toBe("route");
  expect(routeEndpoint("orders.v2.save", httpRequest({ params: z.object({}), query: z.object({}), body: NoBody }), { 204: null }).kind).toBe("route");
  expect(endpoint("orders.v1.http.lookalike", z.object({}), z.object({ saved: z.boolean() })).kind).toBe("request");
});
