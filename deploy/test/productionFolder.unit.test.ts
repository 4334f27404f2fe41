import { describe, expect, it } from "vitest";
import { productionClosure } from "../productionFolder.js";
import { readRepoFile } from "./support.js";

const lock = JSON.parse(readRepoFile("package-lock.json")) as { packages: Parameters<typeof productionClosure>[0] };

describe("a service's production folder", () => {
  it("follows dependencies, nested installs, workspace links and required peers, but not dev or optional peers", () => {
    const packages: Parameters<typeof productionClosure>[0] = {
      "": { devDependencies: { vitest: "1" } },
      "services/a": { dependencies: { "@x/lib": "1", b: "1" }, devDependencies: { vitest: "1" } },
      "libs/lib": { dependencies: { c: "2" }, devDependencies: { "@x/tools": "1" } },
      "libs/tools": { dependencies: { heavy: "1" } },
      "services/other": { dependencies: { d: "1" } },
      "node_modules/@x/lib": { link: true, resolved: "libs/lib" },
      "node_modules/@x/tools": { link: true, resolved: "libs/tools" },
      "node_modules/b": { dependencies: { c: "1" }, peerDependencies: { api: "1", maybe: "1" }, peerDependenciesMeta: { maybe: { optional: true } } },
      "node_modules/b/node_modules/c": {},
      "node_modules/c": {},
      "node_modules/api": {},
      "node_modules/maybe": {},
      "node_modules/d": {},
      "node_modules/heavy": {},
      "node_modules/vitest": {},
    };
    expect([...productionClosure(packages, "services/a")].sort()).toEqual(
      ["libs/lib", "node_modules/@x/lib", "node_modules/api", "node_modules/b", "node_modules/b/node_modules/c", "node_modules/c", "services/a"].sort(),
    );
  });

  it("holds for the gateway no other service's workspace, no test tools, and what its telemetry preload loads", () => {
    const closure = productionClosure(lock.packages, "services/gateway");
    expect([...closure].filter((l) => l.startsWith("services/"))).toEqual(["services/gateway"]);
    expect(closure.has("libs/testing")).toBe(false);
    expect(closure.has("node_modules/vitest")).toBe(false);
    for (const needed of ["libs/telemetry", "proto", "node_modules/@opentelemetry/api", "node_modules/express"]) expect(closure, needed).toContain(needed);
  });
});
