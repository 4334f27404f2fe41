import { assembleGateway, GATEWAY_DEFAULTS, MemoryIdempotencyStore } from "@sched/gateway";
import { createLogger } from "@sched/logging";
import { NATS_URL, REDIS_URL, startGatewayProcess } from "@sched/testing";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, call, createUserWithKey, perSuite, startTestSystem, WIRINGS, type TestSystem, type WiringKind } from "../harness.js";

/** Long enough that only a dropped entry, never an expired one, lets a replica see the new zone. */
const AUTH_CACHE_TTL_MS = 600_000;

interface Replica {
  url: string;
  stop(): Promise<void>;
}

/**
 * A second gateway on the bus of the system: in-process on the same in-memory
 * bus (standalone), or a process of its own on the system's NATS namespace.
 */
async function secondGateway(kind: WiringKind, sys: TestSystem): Promise<Replica> {
  if (kind === "cluster") {
    const gateway = await startGatewayProcess({
      NATS_URL,
      REDIS_URL,
      BUS_NAMESPACE: sys.namespace!,
      ADMIN_TOKEN,
      AUTH_CACHE_TTL_MS: String(AUTH_CACHE_TTL_MS),
    });
    return { url: gateway.url, stop: () => gateway.kill() };
  }
  const { server, background } = await assembleGateway({
    bus: sys.system.bus,
    logger: createLogger({ name: "gateway-b", level: "silent" }),
    settings: { ...GATEWAY_DEFAULTS, authCacheTtlMs: AUTH_CACHE_TTL_MS, adminToken: ADMIN_TOKEN },
    keyPrefix: "sched",
    idempotency: new MemoryIdempotencyStore(),
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await background.stop();
    },
  };
}

// A Monday, inside the default working hours (Monday to Friday, 09:00–17:00), before any DST change of 2030.
const DAY = "2030-03-04";

describe.each(WIRINGS)("a new time zone through two gateway replicas (%s)", async (wiring) => {
  let sys: TestSystem;
  let a: Replica;
  let b: Replica;
  const { available } = await perSuite(wiring, async () => {
    sys = await startTestSystem(wiring, { authCacheTtlMs: AUTH_CACHE_TTL_MS });
    a = { url: sys.url, stop: async () => undefined };
    b = await secondGateway(wiring, sys);
    return {
      stop: async () => {
        await b.stop();
        await sys.stop();
      },
    };
  });

  it.runIf(available)("reads naive start times in the new zone on every replica as soon as PATCH /v1/me answers", async () => {
    const { key } = await createUserWithKey(a.url, { timezone: "UTC" });
    // Both replicas have the caller, zone UTC, in their cache.
    for (const replica of [a, b]) expect((await call(replica.url, "GET", "/v1/me", { key })).body.timezone).toBe("UTC");

    expect((await call(a.url, "PATCH", "/v1/me", { key, body: { timezone: "Asia/Tokyo" } })).status).toBe(200);
    const created = await call(b.url, "POST", "/v1/meetings", { key, body: { title: "Sync", duration: "1 hour", startTime: `${DAY}T10:00:00`, participants: ["ana@example.com"] } });
    expect(created.status).toBe(201);
    expect(created.body.startTime).toBe(`${DAY}T01:00:00Z`);
    const day = await call(b.url, "GET", `/v1/availability?date=${DAY}`, { key });
    expect(day.body).toEqual({
      date: DAY,
      timezone: "Asia/Tokyo",
      slots: [
        { start: "09:00", end: "10:00", status: "free" },
        { start: "10:00", end: "11:00", status: "busy" },
        { start: "11:00", end: "17:00", status: "free" },
      ],
    });

    // The other way round, and the replica that forwarded the change itself.
    expect((await call(b.url, "PATCH", "/v1/me", { key, body: { timezone: "America/New_York" } })).status).toBe(200);
    const moved = await call(a.url, "PATCH", `/v1/meetings/${created.body.id}`, { key, body: { startTime: `${DAY}T14:00:00` } });
    expect(moved.body.startTime).toBe(`${DAY}T19:00:00Z`);
    const again = await call(b.url, "POST", "/v1/meetings", { key, body: { title: "Late", duration: "30 mins", startTime: `${DAY}T16:00:00`, participants: ["ana@example.com"] } });
    expect(again.body.startTime).toBe(`${DAY}T21:00:00Z`);
    expect((await call(a.url, "GET", `/v1/availability?date=${DAY}`, { key })).body).toMatchObject({
      timezone: "America/New_York",
      slots: [
        { start: "09:00", end: "14:00", status: "free" },
        { start: "14:00", end: "15:00", status: "busy" },
        { start: "15:00", end: "16:00", status: "free" },
        { start: "16:00", end: "16:30", status: "busy" },
        { start: "16:30", end: "17:00", status: "free" },
      ],
    });
  }, 60_000);
});
