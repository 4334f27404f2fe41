import { GATEWAY_NODE_OPTIONS } from "@sched/gateway";
import { GATEWAY_NODE_OPTIONS as TEST_GATEWAY_NODE_OPTIONS } from "@sched/testing";
import { describe, expect, it } from "vitest";

describe("the gateway's node options", () => {
  it("are the same in the gateways tests and benchmarks start as in `npm run cluster` and the image", () => {
    expect(TEST_GATEWAY_NODE_OPTIONS).toEqual(GATEWAY_NODE_OPTIONS);
  });
});
