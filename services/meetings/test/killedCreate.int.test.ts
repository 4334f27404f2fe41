import { connectNatsBus, type Bus } from "@sched/bus";
import { createLogger } from "@sched/logging";
import { meetingsCreate } from "@sched/proto";
import { clusterServersAvailable, createTestDatabase, deleteNamespaceStreams, eventually, meetingsCaller, NATS_URL, rejection, startServiceProcess, uniqueSuffix, type ServiceProcess } from "@sched/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const logger = createLogger({ name: "killed-create-test", level: "silent" });
const available = await clusterServersAvailable();

const caller = meetingsCaller("KilledCreate");
const TIMEOUT_MS = 1_500;
/** What docs/api.md promises: a key held by a request that died is free the bus deadline plus one second after it was sent. */
const FREED_AFTER_MS = TIMEOUT_MS + 1_000;
const create = { params: {}, query: {}, body: { title: "Killed", duration: "15 mins" as const, startTime: "2031-01-06T10:00:00Z", participants: ["guest@example.com"] } };
const headers = { "Idempotency-Key": "killed-mid-flight" };

describe.runIf(available)("a create killed mid-flight, with its Idempotency-Key claimed", () => {
  let database: { url: string; drop: () => Promise<void> };
  // Two replicas on one database; each reached on a namespace of its own, so the test picks which serves.
  let doomed: ServiceProcess;
  let survivor: ServiceProcess;
  let doomedBus: Bus;
  let toSurvivor: Bus;
  const [doomedNs, survivorNs] = [`kd${uniqueSuffix()}`, `ks${uniqueSuffix()}`];

  beforeAll(async () => {
    database = await createTestDatabase();
    doomed = await startServiceProcess("meetings", { DATABASE_URL: database.url, NATS_URL, BUS_NAMESPACE: doomedNs });
    survivor = await startServiceProcess("meetings", { DATABASE_URL: database.url, NATS_URL, BUS_NAMESPACE: survivorNs });
    doomedBus = await connectNatsBus({ servers: NATS_URL, namespace: doomedNs, name: "killed-create-test", logger });
    toSurvivor = await connectNatsBus({ servers: NATS_URL, namespace: survivorNs, name: "killed-create-test", logger });
  }, 120_000);

  afterAll(async () => {
    await doomed?.kill();
    await survivor?.kill();
    await doomedBus?.close();
    await toSurvivor?.close();
    await database?.drop();
    if (available) for (const ns of [doomedNs, survivorNs]) await deleteNamespaceStreams(NATS_URL, ns);
  });

  it("holds the key no longer than the request's deadline plus a second, and the 409 before says when to retry", async () => {
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    // The create claims its key, then waits on this lock for its insert: mid-flight, when its process is killed.
    await admin.query("begin");
    await admin.query("lock table meetings.meetings in access exclusive mode");
    const sentAt = Date.now();
    const first = rejection(doomedBus.request(meetingsCreate, create, { caller, headers, timeoutMs: TIMEOUT_MS }));
    const waiting = new pg.Client({ connectionString: database.url });
    await waiting.connect();
    await eventually(async () => (await waiting.query("select 1 from meetings.idempotency_keys where idem_key = $1", [headers["Idempotency-Key"]])).rowCount === 1, 5_000);
    await waiting.end();
    await doomed.kill("SIGKILL");
    await admin.query("commit");
    await admin.end();
    expect((await first).code).toBe("service_unavailable");

    const early = await rejection(toSurvivor.request(meetingsCreate, create, { caller, headers, timeoutMs: 5_000 }));
    expect(early.code).toBe("idempotency_request_in_progress");
    const retryAfterMs = early.details.retryAfterSeconds! * 1_000;
    expect(retryAfterMs).toBeGreaterThan(0);
    // Retry-After is whole seconds, rounded up: never earlier than the claim's end, and not a second later than it.
    expect(Date.now() + retryAfterMs).toBeLessThanOrEqual(sentAt + FREED_AFTER_MS + 1_000 + 200);

    // A little past it, for the retry's own way to the database.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, sentAt + FREED_AFTER_MS + 300 - Date.now())));
    const retried = await toSurvivor.request(meetingsCreate, create, { caller, headers, timeoutMs: 5_000 });
    expect(retried.status).toBe(201);
  }, 60_000);
});
