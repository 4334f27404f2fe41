import { GATEWAY_NODE_OPTIONS } from "@sched/gateway";
import { GATEWAY_NODE_OPTIONS as TEST_GATEWAY_NODE_OPTIONS } from "@sched/testing";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

describe("the gateway's node options", () => {
  it("are the same in the gateways tests and benchmarks start as in `npm run cluster` and the image", () => {
    expect(TEST_GATEWAY_NODE_OPTIONS).toEqual(GATEWAY_NODE_OPTIONS);
  });

  it("are given to `npm start` too, whose process serves as the gateway", () => {
    const { scripts } = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as { scripts: Record<string, string> };
    const start = scripts.start!.split(/\s+/);
    expect(start[0]).toBe("node");
    for (const option of GATEWAY_NODE_OPTIONS) expect(start).toContain(option);
  });
});
