import { describe, expect, it } from "vitest";
import { publicRoutes } from "@sched/proto";
import { claimLeaseMs, decide, idempotencyStoreKey, isKept, type IdempotencyRecord } from "../src/domain/idempotency.js";

const reply = { status: 201, body: { id: "mtg_1" } };

describe("a request finding a record under its key", () => {
  it("replays a finished success with the same fingerprint", () => {
    const done: IdempotencyRecord = { state: "done", fingerprint: "f1", token: "t1", reply };
    expect(decide(done, "f1")).toEqual({ kind: "replay", reply });
  });

  it("waits for a request still running with the same fingerprint", () => {
    expect(decide({ state: "in_progress", fingerprint: "f1", token: "t1" }, "f1")).toEqual({ kind: "in_progress" });
  });

  it("is refused as a reuse when the fingerprint differs, running or finished", () => {
    expect(decide({ state: "in_progress", fingerprint: "f1", token: "t1" }, "f2")).toEqual({ kind: "reused" });
    expect(decide({ state: "done", fingerprint: "f1", token: "t1", reply }, "f2")).toEqual({ kind: "reused" });
  });
});

describe("which answers are kept", () => {
  it("keeps 2xx and nothing else", () => {
    expect([200, 201, 204, 299].map((status) => isKept({ status }))).toEqual([true, true, true, true]);
    expect([199, 300, 400, 404, 409, 422, 429, 500, 503].map((status) => isKept({ status }))).toEqual(Array(9).fill(false));
  });
});

describe("store keys", () => {
  it("separate API keys and idempotency keys, and hide the client's key", () => {
    const a = idempotencyStoreKey("key_a", "order-1");
    expect(a.startsWith("key_a:")).toBe(true);
    expect(a).not.toContain("order-1");
    expect(idempotencyStoreKey("key_b", "order-1")).not.toBe(a);
    expect(idempotencyStoreKey("key_a", "order-2")).not.toBe(a);
    expect(idempotencyStoreKey("key_a", "order-1")).toBe(a);
  });

  it("have a bounded length whatever the client's key", () => {
    expect(idempotencyStoreKey("key_a", "x".repeat(255)).length).toBe(idempotencyStoreKey("key_a", "y").length);
  });
});

describe("the claim lease", () => {
  it("outlives the longest request the bus allows", () => {
    for (const busTimeoutMs of [100, 5_000, 30_000]) expect(claimLeaseMs(busTimeoutMs)).toBeGreaterThan(busTimeoutMs);
  });
});

describe("the route table", () => {
  it("accepts an Idempotency-Key on every POST an API key may call", () => {
    const posts = publicRoutes.filter((r) => r.method === "POST" && r.auth === "api-key");
    expect(posts.length).toBeGreaterThan(0);
    expect(posts.filter((r) => !r.idempotent).map((r) => r.path)).toEqual([]);
  });
});
