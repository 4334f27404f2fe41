import { CALLER_HEADER, connectNatsBus, DEADLINE_HEADER, encodeCaller, type Bus } from "@sched/bus";
import { AppError } from "@sched/errors";
import { createLogger } from "@sched/logging";
import { meetingsCreate, meetingsList } from "@sched/proto";
import { clusterServersAvailable, createTestDatabase, deleteNamespaceStreams, eventually, meetingsCaller, NATS_URL, rejection, startServiceProcess, uniqueSuffix, type ServiceProcess } from "@sched/testing";
import { headers as natsHeaders } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const logger = createLogger({ name: "saturated-pool-test", level: "silent" });
const available = await clusterServersAvailable();

const caller = meetingsCaller("SaturatedPool");
const create = (title: string) => ({ params: {}, query: {}, body: { title, duration: "15 mins" as const, startTime: "2031-01-06T10:00:00Z", participants: ["guest@example.com"] } });

describe.runIf(available)("a service whose one pooled connection is taken by a request stuck in the database", () => {
  let database: { url: string; drop: () => Promise<void> };
  let meetings: ServiceProcess;
  let client: Bus;
  let admin: pg.Client;
  const namespace = `sp${uniqueSuffix()}`;

  const titled = async (title: string) => (await admin.query("select id from meetings.meetings where title = $1", [title])).rowCount;

  beforeAll(async () => {
    database = await createTestDatabase();
    meetings = await startServiceProcess("meetings", { DATABASE_URL: database.url, NATS_URL, BUS_NAMESPACE: namespace, DB_POOL_MAX: "1" });
    client = await connectNatsBus({ servers: NATS_URL, namespace, name: "saturated-pool-test", logger });
    admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
  }, 100_000);

  afterAll(async () => {
    await meetings?.kill();
    await client?.close();
    await admin?.end();
    await database?.drop();
    if (available) await deleteNamespaceStreams(NATS_URL, namespace);
  });

  it("stays ready, and a request that could not get a connection before its deadline gives up instead of writing later", async () => {
    // A lock held elsewhere keeps the request holding the pool's connection waiting.
    const locker = new pg.Client({ connectionString: database.url });
    await locker.connect();
    await locker.query("begin");
    await locker.query("lock table meetings.meetings in access exclusive mode");
    let stuck: Promise<unknown> | undefined;
    try {
      stuck = client.request(meetingsList, { params: {}, query: {}, body: undefined }, { caller, timeoutMs: 30_000 });
      await eventually(async () => {
        const waiting = await admin.query("select 1 from pg_stat_activity where application_name = 'meetings' and wait_event_type = 'Lock'");
        return waiting.rowCount === 1;
      }, 10_000);

      // Readiness asks on a connection of its own, and in time.
      const started = Date.now();
      const ready = await fetch(`${meetings.healthUrl}/readyz`);
      expect(ready.status, await ready.text()).toBe(200);
      expect(Date.now() - started).toBeLessThan(2_000);

      const sentAt = Date.now();
      const late = await rejection(client.request(meetingsCreate, create("late"), { caller, timeoutMs: 1_000 }));
      expect(late.code).toBe("service_unavailable");
      // Well past its deadline: a service still queueing it for a connection would get one once the lock goes.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, sentAt + 1_500 - Date.now())));
    } finally {
      await locker.query("commit");
      await locker.end();
    }
    expect(await stuck).toMatchObject({ status: 200 });
    // The pool hands out connections in order: a create after the late one is served after it would have been.
    expect(await client.request(meetingsCreate, create("after"), { caller, timeoutMs: 10_000 })).toMatchObject({ status: 201 });
    expect(await titled("after")).toBe(1);
    expect(await titled("late")).toBe(0);
  }, 60_000);

  it("does not run a request whose deadline passed before it arrived", async () => {
    const nc = await connect({ servers: NATS_URL });
    try {
      const h = natsHeaders();
      h.set(CALLER_HEADER, encodeCaller(caller));
      h.set(DEADLINE_HEADER, String(Date.now() - 1));
      const reply = await nc.request(`${namespace}.${meetingsCreate.subject}`, JSON.stringify(create("arrived late")), { timeout: 5_000, headers: h });
      expect(AppError.fromJSON(reply.json()).code).toBe("service_unavailable");
    } finally {
      await nc.close();
    }
    expect(await client.request(meetingsCreate, create("in time"), { caller })).toMatchObject({ status: 201 });
    expect(await titled("arrived late")).toBe(0);
  });
});
