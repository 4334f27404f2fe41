import { publicRoutes } from "@sched/proto";
import { describe, expect, it } from "vitest";
import { compileRoutes } from "../src/domain/routeMatch.js";

const match = compileRoutes(publicRoutes);
const summary = (method: string, path: string) => {
  const found = match(method, path);
  return found.kind === "found" ? { kind: found.kind, path: found.route.path, params: found.params } : found;
};

describe("matching a request against the route table", () => {
  it("decodes each segment, and answers another method on a known path with 405 and Allow", () => {
    expect(summary("GET", "/v1/meetings/mtg%5F1/")).toEqual({ kind: "found", path: "/v1/meetings/:id", params: { id: "mtg_1" } });
    expect(summary("PUT", "/v1/meetings/mtg_1")).toEqual({ kind: "method_not_allowed", allow: ["DELETE", "GET", "PATCH"] });
    expect(summary("GET", "/v1/nope")).toEqual({ kind: "not_found" });
  });

  it("takes a segment that is not valid percent-encoding as written: an id of the wrong shape for the route, 405 for another method, no literal", () => {
    expect(summary("GET", "/v1/contacts/%zz")).toEqual({ kind: "found", path: "/v1/contacts/:id", params: { id: "%zz" } });
    expect(summary("DELETE", "/v1/meetings/%zz")).toEqual({ kind: "found", path: "/v1/meetings/:id", params: { id: "%zz" } });
    expect(summary("PUT", "/v1/meetings/%zz")).toEqual(summary("PUT", "/v1/meetings/mtg_1"));
    expect(summary("GET", "/v1/meetings/%E0%A4%A/invites")).toEqual({ kind: "found", path: "/v1/meetings/:id/invites", params: { id: "%E0%A4%A" } });
    expect(summary("GET", "/v1/m%zze")).toEqual({ kind: "not_found" });
  });
});

describe("the route table grouped by leading segments", () => {
  const route = (method: string, path: string) => ({ ...publicRoutes[0]!, method, path }) as (typeof publicRoutes)[number];
  const table = [route("GET", "/v1/items/:id"), route("PUT", "/:version/items/:id"), route("POST", "/v1/:kind/:id"), route("DELETE", "/v1/items/:id"), route("GET", "/")];
  const matchIn = compileRoutes(table);
  const found = (method: string, path: string) => {
    const m = matchIn(method, path);
    return m.kind === "found" ? { index: table.indexOf(m.route), params: m.params } : m;
  };

  it("when a route takes a parameter among the leading segments, then it is a candidate of every request of its length, in the table's order", () => {
    expect(found("GET", "/v1/items/7")).toEqual({ index: 0, params: { id: "7" } });
    expect(found("PUT", "/v1/items/7")).toEqual({ index: 1, params: { version: "v1", id: "7" } });
    expect(found("POST", "/v1/items/7")).toEqual({ index: 2, params: { kind: "items", id: "7" } });
    expect(found("PUT", "/v2/items/7")).toEqual({ index: 1, params: { version: "v2", id: "7" } });
    expect(found("PATCH", "/v1/items/7")).toEqual({ kind: "method_not_allowed", allow: ["DELETE", "GET", "POST", "PUT"] });
    expect(found("PATCH", "/v2/things/7")).toEqual({ kind: "not_found" });
    expect(found("POST", "/v1/things/7")).toEqual({ index: 2, params: { kind: "things", id: "7" } });
  });

  it("when a segment is empty, a decoded slash or the root, then it is matched as the whole table would", () => {
    expect(found("GET", "/v1/items/")).toEqual({ kind: "not_found" });
    expect(found("GET", "/v1//7")).toEqual({ kind: "not_found" });
    expect(found("GET", "/v1/items%2F7")).toEqual({ kind: "not_found" });
    expect(found("POST", "/v1/items%2Fx/7")).toEqual({ index: 2, params: { kind: "items/x", id: "7" } });
    expect(found("GET", "/")).toEqual({ index: 4, params: {} });
  });
});
