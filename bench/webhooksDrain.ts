import { spawn } from "node:child_process";
import pg from "pg";
import { openSchema, type Knex } from "@sched/db";
import { createLogger } from "@sched/logging";
import type { PublicEvent } from "@sched/proto";
import { clusterServersAvailable, createTestDatabase } from "@sched/testing";
import { insertEndpoint } from "../services/webhooks/src/db/queries.js";
import { DeliveryWorker } from "../services/webhooks/src/outbound/worker.js";
import { SecretCipher } from "../services/webhooks/src/domain/secretCipher.js";
import { recordBatch } from "../services/webhooks/src/consumers/recording.js";
import { webhooksService } from "../services/webhooks/src/service.js";
import { processCpuUs } from "./lib/cpuTime.js";
import { countersPer, countersSince, schemaCounters } from "./lib/schemaCounters.js";
import { walPer, walPosition, walRelease, walSince } from "./lib/walCounters.js";
import type { BenchOptions } from "./meetings.js";

const ENDPOINTS = 10;
/** Events a consumer batch brings at 100 events a second (what the webhooks benchmark's consumer sees). */
const EVENTS_PER_BATCH = 5;
const EVENTS_PER_SECOND = 100;

/**
 * The webhooks service's Postgres work per delivery, without the rest of
 * the system: the service's own batch recording and delivery worker on a
 * fresh database, fed 100 meeting events a second (in batches of five) for
 * ten endpoints on a loopback receiver, until every delivery has arrived.
 * Reported per delivery: SQL statements, rows written (inserted, updated,
 * in place, deleted), index entries read (per index), the write-ahead log
 * of this database (bytes, heap and index records) and the database
 * backend's CPU. All but the CPU do not depend on the machine's load; the
 * CPU does, less than times.
 */
export async function benchWebhooksDrain(options: BenchOptions): Promise<void> {
  if (!(await clusterServersAvailable())) throw new Error("webhooks-drain needs the local Postgres");
  const events = options.quick ? 500 : 2_000;
  const database = await createTestDatabase();
  const db = await openSchema({ kind: "postgres", url: database.url, poolMax: 4 }, webhooksService.schema, webhooksService.migrations);
  // The receiver runs in a process of its own, so this process's CPU is the worker's alone.
  const receiver = await startReceiver();
  const logger = createLogger({ name: "bench", level: "error" });
  const cipher = new SecretCipher(Buffer.alloc(32, 7));
  const worker = new DeliveryWorker(db, cipher, logger, {
    retry: { baseMs: 5_000, maxDelayMs: 60_000, windowMs: 3_600_000 },
    timeoutMs: 10_000,
    allowPrivate: true,
    concurrency: 64,
    perEndpoint: 4,
    pollMs: 1_000,
  });
  try {
    const { port } = receiver;
    for (let i = 0; i < ENDPOINTS; i++) {
      const id = `whe_${String(i).padStart(24, "0")}`;
      await insertEndpoint(db, { id, userId: "usr_drain", mode: "test", url: `http://127.0.0.1:${port}/hook-${i}`, events: ["*"], description: "", sealedSecret: cipher.seal(`whsec_${Buffer.alloc(24, i).toString("base64")}`, id) });
    }
    // Counted in pg's client, not by knex's query event: statements sent by name (runNamed) bypass knex.
    let statements = 0;
    const send = pg.Client.prototype.query as (...args: unknown[]) => unknown;
    pg.Client.prototype.query = function counted(this: pg.Client, ...args: unknown[]) {
      statements++;
      return send.apply(this, args);
    } as typeof pg.Client.prototype.query;
    const before = await schemaCounters(db, webhooksService.schema);
    const walFrom = await walPosition(db);
    statements = 0;
    const backendBefore = await backendCpuUs(db);
    const processBefore = process.cpuUsage();
    worker.start();
    for (let i = 0; i < events; i += EVENTS_PER_BATCH) {
      const batch = Array.from({ length: EVENTS_PER_BATCH }, (_, k) => createdEvent(i + k));
      // As the service's consumers do: the recording statement claims for the worker what it has room for.
      await recordBatch(db, batch, worker);
      await new Promise((resolve) => setTimeout(resolve, (1_000 * EVENTS_PER_BATCH) / EVENTS_PER_SECOND));
    }
    const deliveries = events * ENDPOINTS;
    const deadline = Date.now() + 120_000;
    while (receiver.arrived < deliveries && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const processUsed = process.cpuUsage(processBefore);
    const receiverUsed = await receiver.cpuUs();
    const backendUsed = (await backendCpuUs(db)) - backendBefore;
    const sql = statements;
    await worker.stop();
    const after = await schemaCounters(db, webhooksService.schema);
    const wal = await walSince(db, walFrom);
    const per = (n: number, digits = 2) => (n / deliveries).toFixed(digits);
    console.log(`\nwebhooks-drain: ${events} events × ${ENDPOINTS} endpoints (${deliveries} deliveries, ${receiver.arrived} arrived), ${EVENTS_PER_SECOND} events/s in batches of ${EVENTS_PER_BATCH}`);
    console.log(`  per delivery: ${per(sql, 3)} SQL statements; database backend CPU ${per(backendUsed, 0)} µs; this process (worker) ${per(processUsed.user + processUsed.system, 0)} µs; the receiver (a process of its own) ${per(receiverUsed, 0)} µs`);
    for (const line of countersPer(countersSince(before, after), deliveries)) console.log(`  ${line}`);
    for (const line of walPer(wal, deliveries)) console.log(`  ${line}`);
  } finally {
    await walRelease(db).catch(() => undefined);
    receiver.stop();
    await db.destroy();
    await database.drop();
  }
}

function createdEvent(i: number): { sourceEventId: string; userId: string; meetingId: string; event: PublicEvent } {
  const meetingId = `mtg_${String(i).padStart(24, "0")}`;
  const event: PublicEvent = {
    id: `evt_${String(i).padStart(24, "0")}`,
    type: "meeting.created",
    createdAt: new Date().toISOString(),
    mode: "test",
    data: { object: { id: meetingId, title: `Drain ${i}`, description: "", startTime: "2033-01-03T10:00:00Z", duration: "30 mins", participants: ["p@example.com"], status: "confirmed", organizer: "o@example.com", createdAt: new Date().toISOString(), attendees: [], recurrence: null, seriesId: null, originalStartTime: null } },
  };
  return { sourceEventId: `src_${i}`, userId: "usr_drain", meetingId, event };
}

/** CPU time of this database's backends so far, in µs (the pool keeps its connections). */
async function backendCpuUs(db: Knex): Promise<number> {
  const { rows } = await db.raw<{ rows: { pid: number }[] }>("select pid from pg_stat_activity where datname = current_database()");
  return rows.reduce((sum, { pid }) => sum + processCpuUs(pid), 0);
}

/** The loopback receiver, in a child process: it answers 204 to every POST and reports how many arrived. */
const RECEIVER = `
  const server = require("node:http").createServer((req, res) => {
    req.resume();
    req.on("end", () => { arrived++; res.writeHead(204).end(); });
  });
  let arrived = 0;
  process.on("message", () => { const used = process.cpuUsage(); process.send({ cpuUs: used.user + used.system }); });
  setInterval(() => process.send({ arrived }), 50).unref();
  server.listen(0, "127.0.0.1", () => process.send({ port: server.address().port }));
`;

async function startReceiver(): Promise<{ port: number; readonly arrived: number; cpuUs(): Promise<number>; stop(): void }> {
  const child = spawn(process.execPath, ["-e", RECEIVER], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  let arrived = 0;
  let cpuBefore = 0;
  const cpu = () => new Promise<number>((resolve) => {
    const answer = (m: { cpuUs?: number }) => {
      if (m.cpuUs === undefined) return;
      child.off("message", answer);
      resolve(m.cpuUs);
    };
    child.on("message", answer);
    child.send("cpu");
  });
  child.on("message", (m: { arrived?: number }) => {
    if (m.arrived !== undefined) arrived = m.arrived;
  });
  const port = await new Promise<number>((resolve) => {
    const listening = (m: { port?: number }) => m.port !== undefined && resolve(m.port);
    child.on("message", listening);
  });
  cpuBefore = await cpu();
  return {
    port,
    get arrived() {
      return arrived;
    },
    cpuUs: async () => (await cpu()) - cpuBefore,
    stop: () => child.kill(),
  };
}
