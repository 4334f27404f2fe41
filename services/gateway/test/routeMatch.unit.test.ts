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
