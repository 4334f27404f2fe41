import { endpoint, HttpReply, publicRoutes } from "@sched/proto";
import { expect, it } from "vitest";
import { z } from "zod";
import { isHttpRoute } from "../src/codec.js";

it("takes an endpoint for an HTTP route by the reply its contract declares, not by its subject's spelling", () => {
  for (const route of publicRoutes) expect(isHttpRoute(route.endpoint), route.endpoint.subject).toBe(true);
  expect(isHttpRoute(endpoint("orders.v2.save", z.object({}), HttpReply))).toBe(true);
  expect(isHttpRoute(endpoint("orders.v1.http.lookalike", z.object({}), z.object({ saved: z.boolean() })))).toBe(false);
});
