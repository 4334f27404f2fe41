import { connectNatsBus, type Bus } from "@sched/bus";
import { AppError } from "@sched/errors";
import { createLogger } from "@sched/logging";
import { meetingsCreate } from "@sched/proto";
import { clusterServersAvailable, createTestDatabase, deleteNamespaceStreams, eventually, meetingsCaller, NATS_URL, startServiceProcess, uniqueSuffix, type ServiceProcess } from "@sched/testing";
import { createServer as createHttpServer, type Server } from "node:http";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const logger = createLogger({ name: "shutdown-test", level: "silent" });
const available = await clusterServersAvailable();

const GRACE_MS = 8_000;
const DELAY_MS = 400;
const REQUEST_TIMEOUT_MS = 5_000;
/** Far below the request deadline: a refusal is immediate, only a dropped request waits that long. */
const FAST_MS = 2_000;

const caller = meetingsCaller("ShutdownTest");

async function get(url: string): Promise<{ status: number; text: string } | "refused"> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(3_000) });
    return { status: res.status, text: await res.text() };
  } catch {
    return "refused";
  }
}

interface Outcome {
  status: number;
  id?: string;
  ms: number;
  endedAt: number;
}

describe.runIf(available)("a service process stopped with SIGTERM during a stream of requests", () => {
  let database: { url: string; drop: () => Promise<void> };
  const namespace = `sd${uniqueSuffix()}`;
  let meetings: ServiceProcess;
  let client: Bus;
  // Stands in for an OpenTelemetry collector: what the process pushes over OTLP/HTTP.
  const pushed: Array<{ path: string; body: Buffer }> = [];
  let collector: Server;

  beforeAll(async () => {
    database = await createTestDatabase();
    collector = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        pushed.push({ path: req.url ?? "", body: Buffer.concat(chunks) });
        res.writeHead(200, { "content-type": req.headers["content-type"] ?? "application/x-protobuf" });
        res.end();
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve));
    meetings = await startServiceProcess(
      "meetings",
      {
        DATABASE_URL: database.url,
        NATS_URL,
        BUS_NAMESPACE: namespace,
        SHUTDOWN_GRACE_MS: String(GRACE_MS),
        SHUTDOWN_DELAY_MS: String(DELAY_MS),
        LOG_LEVEL: "warn",
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as { port: number }).port}`,
        OTEL_METRIC_EXPORT_INTERVAL: "60000",
      },
      { telemetry: true },
    );
    client = await connectNatsBus({ servers: NATS_URL, namespace, name: "shutdown-test", logger });
  }, 100_000);

  afterAll(async () => {
    await meetings?.kill();
    await client?.close();
    await database?.drop();
    await deleteNamespaceStreams(NATS_URL, namespace);
    collector?.close();
  });

  it("answers its probes and serves its instruments on HEALTH_PORT", async () => {
    const base = meetings.healthUrl;
    expect(await get(`${base}/livez`)).toMatchObject({ status: 200 });
    const ready = await get(`${base}/readyz`);
    expect(ready).toMatchObject({ status: 200 });
    expect(JSON.parse((ready as { text: string }).text).checks).toEqual({ migrations: true, bus: true, database: true, endpoints: true });

    const reply = await client.request(meetingsCreate, { params: {}, query: {}, body: probeBody("probe") }, { caller });
    expect(reply.status).toBe(201);
    // The relay publishes the meeting's event just after the reply.
    const text = await eventually(async () => {
      const metrics = await get(`${base}/metrics`);
      return metrics !== "refused" && metrics.status === 200 && metrics.text.includes("sched_bus_events_published") && metrics.text;
    });
    expect(text).toMatch(/sched_bus_server_duration_count\{[^}]*subject="meetings\.v1\.http\.create"[^}]*outcome="ok"/);
    expect(text).toMatch(/sched_bus_events_published(_total)?\{[^}]*subject="meetings\.v1\.events\.meeting\.created"/);
    expect(text).toMatch(/sched_outbox_lag\{[^}]*outbox="meetings"/);
  });

  it("loses none of the accepted requests, refuses the rest at once, turns unready first and exits 0 in time", async () => {
    const outcomes: Outcome[] = [];
    let sent = 0;
    let streaming = true;
    const worker = async () => {
      while (streaming) {
        const n = sent++;
        const started = Date.now();
        try {
          const reply = await client.request(meetingsCreate, { params: {}, query: {}, body: probeBody(`stream ${n}`) }, { caller, timeoutMs: REQUEST_TIMEOUT_MS });
          outcomes.push({ status: reply.status, id: (reply.body as { id: string }).id, ms: Date.now() - started, endedAt: Date.now() });
        } catch (err) {
          outcomes.push({ status: err instanceof AppError ? err.status : 0, ms: Date.now() - started, endedAt: Date.now() });
          // Past the service's exit every request is refused at once: do not spin.
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    };
    const workers = Array.from({ length: 8 }, worker);
    await eventually(() => outcomes.filter((o) => o.status === 201).length >= 30, 20_000);

    const signalledAt = Date.now();
    meetings.signal("SIGTERM");
    const probes: Array<number | "refused"> = [];
    let exitedYet = false;
    void meetings.exited.then(() => (exitedYet = true));
    while (!exitedYet && Date.now() - signalledAt < GRACE_MS + 2_000) {
      const r = await get(`${meetings.healthUrl}/readyz`);
      probes.push(r === "refused" ? r : r.status);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const exit = await meetings.exited;
    // The stream goes on a little past the exit: those requests find nobody and are refused.
    await new Promise((resolve) => setTimeout(resolve, 300));
    streaming = false;
    await Promise.all(workers);

    expect(exit.code, meetings.output()).toBe(0);
    expect(exit.at - signalledAt).toBeLessThan(GRACE_MS);
    // Ready until the signal is handled, then never again.
    const unready = probes.indexOf(503);
    expect(unready).toBeGreaterThanOrEqual(0);
    expect(probes.slice(unready)).not.toContain(200);

    expect(outcomes.every((o) => o.status === 201 || o.status === 503), JSON.stringify(outcomes.filter((o) => o.status !== 201 && o.status !== 503))).toBe(true);
    const slow = outcomes.filter((o) => o.ms >= FAST_MS);
    expect(slow, "requests that hung until their deadline").toEqual([]);
    expect(outcomes.some((o) => o.status === 201 && o.endedAt > signalledAt)).toBe(true);
    expect(outcomes.some((o) => o.status === 503 && o.endedAt > signalledAt)).toBe(true);

    // Every request the service accepted and committed got its 201, and every 201 is stored.
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    const stored = (await db.query<{ id: string }>("select id from meetings.meetings where title like 'stream %'")).rows.map((r) => r.id);
    await db.end();
    const answered = outcomes.filter((o) => o.status === 201).map((o) => o.id!);
    expect(new Set(stored)).toEqual(new Set(answered));
  }, 60_000);

  it("flushed its spans and metrics to the OTLP endpoint before exiting", async () => {
    // The metric push was not due for 60 s: what arrived is the shutdown's flush. Spans go in batches, the last at shutdown.
    const traces = pushed.filter((p) => p.path === "/v1/traces").map((p) => p.body.toString("latin1")).join("");
    const metrics = pushed.filter((p) => p.path === "/v1/metrics").map((p) => p.body.toString("latin1")).join("");
    expect(traces).toContain("meetings.v1.http.create");
    expect(traces).toContain("meetings.v1.events.meeting.created send");
    expect(traces).not.toContain("guest@example.com");
    expect(metrics).toContain("sched.bus.server.duration");
  });

});

function probeBody(title: string) {
  return { title, duration: "15 mins" as const, startTime: "2031-01-06T10:00:00Z", participants: ["guest@example.com"] };
}
