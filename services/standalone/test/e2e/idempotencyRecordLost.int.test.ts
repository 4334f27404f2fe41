import type { Knex } from "@sched/db";
import { createLogger } from "@sched/logging";
import { eventually, REDIS_URL } from "@sched/testing";
import { Redis } from "ioredis";
import { DateTime } from "luxon";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { System } from "../../src/system.js";
import { ADMIN_TOKEN, type ApiResponse, call, createUserWithKey, expectError, perSuite, startTestSystem, WIRINGS, type WiringKind } from "../harness.js";

const monday = DateTime.utc().plus({ weeks: 2 }).startOf("week").toISODate()!;

/** A running system whose gateway can be made to forget every Idempotency-Key record it keeps, as a gateway killed before saving one does. */
interface ForgetfulWorld {
  readonly url: string;
  /** A service's own database handle, to see what it keeps. */
  database(service: string): Knex;
  forgetGatewayRecords(): Promise<void>;
  stop(): Promise<void>;
}

/** Cluster: the gateway's records are in Redis, under the namespace; they are deleted there. */
async function clusterWorld(): Promise<ForgetfulWorld> {
  const sys = await startTestSystem("cluster");
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  return {
    url: sys.url,
    database: (service) => sys.system.database(service),
    forgetGatewayRecords: async () => {
      const keys = await redis.keys(`${sys.namespace}:idem-sealed:*`);
      expect(keys.length).toBeGreaterThan(0);
      await redis.del(...keys);
    },
    stop: async () => {
      redis.disconnect();
      await sys.stop();
    },
  };
}

/** Standalone: the gateway keeps its records in the process's memory; the process restarts on the same data. */
async function standaloneWorld(): Promise<ForgetfulWorld> {
  const dataDir = mkdtempSync(join(tmpdir(), "sched-idem-"));
  const start = () => new System({ wiring: { kind: "standalone", dataDir }, logger: createLogger({ name: "e2e", level: "silent" }), port: 0, adminToken: ADMIN_TOKEN }).start();
  let system = await start();
  return {
    get url() {
      return system.url;
    },
    database: (service) => system.database(service),
    forgetGatewayRecords: async () => {
      await system.stop();
      system = await start();
    },
    stop: async () => {
      await system.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** `again` is `first` sent again by the service that wrote it: its status and body, said to be a replay. */
function expectReplayOf(first: ApiResponse, again: ApiResponse): void {
  expect(again.status).toBe(first.status);
  expect(again.headers.get("idempotent-replayed")).toBe("true");
  expect(again.body).toEqual(first.body);
}

const worlds: Record<WiringKind, () => Promise<ForgetfulWorld>> = { cluster: clusterWorld, standalone: standaloneWorld };

describe.each(WIRINGS)("a retry the gateway no longer remembers (%s)", async (wiring) => {
  const suite = await perSuite(wiring, worlds[wiring]);
  let n = 0;
  const idem = () => ({ "Idempotency-Key": `lost-${wiring}-${Date.now()}-${n++}` });

  it.runIf(suite.available)("replays the first 201 of a committed create instead of making a second meeting", async () => {
    const world = suite.started;
    const owner = await createUserWithKey(world.url);
    const headers = idem();
    const meeting = { title: "Planning", duration: "30 mins", startTime: `${monday}T10:00:00Z`, participants: ["ana@example.com"] };
    const first = await call(world.url, "POST", "/v1/meetings", { key: owner.key, body: meeting, headers });
    expect(first.status).toBe(201);

    await world.forgetGatewayRecords();
    const again = await call(world.url, "POST", "/v1/meetings", { key: owner.key, body: meeting, headers });
    expectReplayOf(first, again);
    expect((await call(world.url, "GET", "/v1/meetings?filter=all", { key: owner.key })).body.data.map((m: { id: string }) => m.id)).toEqual([first.body.id]);

    // The meetings service judges by the gateway's fingerprint too: another body under the key is refused, not created.
    await world.forgetGatewayRecords();
    expectError(await call(world.url, "POST", "/v1/meetings", { key: owner.key, body: { ...meeting, title: "Other" }, headers }), 422, "idempotency_key_reused");
    expect((await call(world.url, "GET", "/v1/meetings?filter=all", { key: owner.key })).body.data).toHaveLength(1);
  }, 240_000);

  it.runIf(suite.available)("replays the first 201 of a contact added instead of answering 409 contact_exists", async () => {
    const world = suite.started;
    const owner = await createUserWithKey(world.url);
    const headers = idem();
    const first = await call(world.url, "POST", "/v1/contacts", { key: owner.key, body: { email: "bo@example.com" }, headers });
    expect(first.status).toBe(201);

    await world.forgetGatewayRecords();
    const again = await call(world.url, "POST", "/v1/contacts", { key: owner.key, body: { email: "bo@example.com" }, headers });
    expectReplayOf(first, again);
    expect((await call(world.url, "GET", "/v1/contacts", { key: owner.key })).body.data).toHaveLength(1);
  }, 240_000);

  it.runIf(suite.available)("replays the first 202 of a resend instead of queueing its deliveries again", async () => {
    const world = suite.started;
    const owner = await createUserWithKey(world.url);
    // Nothing answers there: the deliveries stay queued, which is all this test counts.
    const endpoint = await call(world.url, "POST", "/v1/webhook-endpoints", { key: owner.key, body: { url: "http://127.0.0.1:9/hook" } });
    expect(endpoint.status).toBe(201);
    await call(world.url, "POST", "/v1/meetings", { key: owner.key, body: { title: "Resent", duration: "30 mins", startTime: `${monday}T11:00:00Z`, participants: ["cy@example.com"] } });
    const eventId = await eventually(
      async () => ((await call(world.url, "GET", "/v1/events?type=meeting.created", { key: owner.key })).body.data[0]?.id as string | undefined),
      30_000,
      250,
    );
    // Invite events come to the endpoint too: only the meeting's event is counted.
    const deliveries = async () =>
      ((await call(world.url, "GET", `/v1/webhook-endpoints/${endpoint.body.id}/deliveries`, { key: owner.key })).body.data as Array<{ eventId: string }>).filter((d) => d.eventId === eventId);
    await eventually(async () => (await deliveries()).length === 1, 30_000, 250);
    const headers = idem();
    const first = await call(world.url, "POST", `/v1/events/${eventId}/resend`, { key: owner.key, headers });
    expect(first.status).toBe(202);
    expect(first.body.data).toHaveLength(1);

    await world.forgetGatewayRecords();
    const again = await call(world.url, "POST", `/v1/events/${eventId}/resend`, { key: owner.key, headers });
    expectReplayOf(first, again);
    expect(await deliveries()).toHaveLength(2);
  }, 240_000);

  it.runIf(suite.available)("replays a webhook endpoint's creation and a roll of its secret, the secrets sealed where the service keeps them", async () => {
    const world = suite.started;
    const owner = await createUserWithKey(world.url);
    const headers = idem();
    const first = await call(world.url, "POST", "/v1/webhook-endpoints", { key: owner.key, body: { url: "http://127.0.0.1:9/created" }, headers });
    expect(first.status).toBe(201);
    const rollHeaders = idem();
    const rolled = await call(world.url, "POST", `/v1/webhook-endpoints/${first.body.id}/roll-secret`, { key: owner.key, headers: rollHeaders });
    expect(rolled.status).toBe(200);

    await world.forgetGatewayRecords();
    const again = await call(world.url, "POST", "/v1/webhook-endpoints", { key: owner.key, body: { url: "http://127.0.0.1:9/created" }, headers });
    expectReplayOf(first, again);
    expect((await call(world.url, "GET", "/v1/webhook-endpoints", { key: owner.key })).body.data).toHaveLength(1);
    const rolledAgain = await call(world.url, "POST", `/v1/webhook-endpoints/${first.body.id}/roll-secret`, { key: owner.key, headers: rollHeaders });
    expectReplayOf(rolled, rolledAgain);

    const kept = (await world.database("webhooks")("idempotency_keys").whereIn("idem_key", [headers["Idempotency-Key"], rollHeaders["Idempotency-Key"]]).select(world.database("webhooks").raw("response_body::text as text"))) as Array<{ text: string }>;
    expect(kept).toHaveLength(2);
    for (const { text } of kept) for (const secret of [first.body.secret, rolled.body.secret]) expect(text).not.toContain(secret);
  }, 240_000);
});
