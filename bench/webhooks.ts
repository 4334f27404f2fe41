import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { loadavg } from "node:os";
import type { Knex } from "@sched/db";
import { callApi, createUser } from "./lib/api.js";
import { percentile } from "./lib/stats.js";
import { startBenchSystem, type BenchSystem, type WiringKind } from "./lib/system.js";
import { countersPer, countersSince, schemaCounters, type RelationCounter } from "./lib/schemaCounters.js";
import type { BenchOptions } from "./meetings.js";

const ENDPOINTS = 10;

/**
 * The target: 1,000 deliveries a second (100 meeting events a second, each
 * to ten endpoints), each within 1 s median and 5 s p99 of its event's
 * commit. Twice the target is measured beside it.
 */
const RATES = [100, 200];
const QUICK_RATES = [50];

/** Clock ticks a second of /proc/<pid>/stat (USER_HZ; 100 on Linux). */
const TICKS_PER_SECOND = 100;

/**
 * Webhook fan-out: meetings created at a steady rate by one user with ten
 * webhook endpoints on a loopback receiver; for each of the resulting
 * deliveries, the time from the create's answer (its commit) to its arrival,
 * and the creates' own latency against a first phase without endpoints.
 * Beside the times, which a loaded machine inflates, what does not depend on
 * the load: the CPU the fan-out costs (this process and the database's
 * backends, over the first phase's) and the SQL statements of the webhooks
 * service, per delivery.
 */
export async function benchWebhooks(options: BenchOptions): Promise<void> {
  const seconds = options.quick ? 5 : 10;
  for (const kind of options.wirings) {
    for (const rate of options.quick ? QUICK_RATES : RATES) await benchRate(kind, rate, seconds);
  }
}

async function benchRate(kind: WiringKind, rate: number, seconds: number): Promise<void> {
  const system = await startBenchSystem(kind);
  const arrivals = new Map<string, number[]>();
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const meeting = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { data: { object: { id: string } } }).data.object.id;
      arrivals.set(meeting, [...(arrivals.get(meeting) ?? []), performance.now()]);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", () => resolve()));
  try {
    const load = loadavg()[0]!.toFixed(1);
    const quiet = await createUser(system.url, system.adminToken, { email: `quiet-${Date.now()}@example.com`, name: "Quiet" });
    const loud = await createUser(system.url, system.adminToken, { email: `loud-${Date.now()}@example.com`, name: "Loud" });
    const port = (receiver.address() as AddressInfo).port;
    for (let i = 0; i < ENDPOINTS; i++) {
      const res = await callApi(system.url, "POST", "/v1/webhook-endpoints", { token: loud.key, body: { url: `http://127.0.0.1:${port}/hook-${i}` } });
      if (res.status !== 201) throw new Error(`endpoint create answered ${res.status}`);
    }
    const statements = statementCounter(system);
    const cpu = await cpuMeter(system);
    const tables = tableActivity(system);

    const baselineCpu = await cpu.start();
    const baseline = await createAtRate(system.url, quiet.key, rate, seconds);
    const baselineCost = await baselineCpu();

    const tablesBefore = await tables.read();
    statements.reset();
    const fannedCpu = await cpu.start();
    const fanned = await createAtRate(system.url, loud.key, rate, seconds);
    const deadline = performance.now() + 60_000;
    while ([...fanned.committedAt.keys()].some((id) => (arrivals.get(id)?.length ?? 0) < ENDPOINTS) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const fannedCost = await fannedCpu();
    const sql = statements.count();
    const touched = await tables.since(tablesBefore);

    const lags: number[] = [];
    let missing = 0;
    let delivered = 0;
    for (const [id, committed] of fanned.committedAt) {
      const got = arrivals.get(id) ?? [];
      missing += Math.max(0, ENDPOINTS - got.length);
      delivered += got.length;
      for (const at of got) lags.push(at - committed);
    }
    lags.sort((a, b) => a - b);
    const row = (name: string, ms: number[]) => `${name}: median ${percentile(ms, 50).toFixed(1)} ms, p99 ${percentile(ms, 99).toFixed(1)} ms`;
    const perDelivery = (ms: number) => `${((ms * 1_000) / Math.max(1, delivered)).toFixed(0)} µs`;
    console.log(`\n${kind}: ${rate} creates/s for ${seconds} s, ${ENDPOINTS} endpoints (${fanned.committedAt.size * ENDPOINTS} deliveries, ${rate * ENDPOINTS}/s); load average ${load} at the start`);
    const failures = (n: number) => (n > 0 ? `; ${n} failed` : "");
    console.log(`  ${row("POST /v1/meetings, no endpoints", baseline.latencies)}${failures(baseline.failed)}`);
    console.log(`  ${row("POST /v1/meetings, 10 endpoints", fanned.latencies)}${failures(fanned.failed)}`);
    console.log(`  ${row("delivery after commit", lags)}; ${missing} not delivered within 60 s`);
    console.log(
      `  CPU of the fan-out over the creates alone, per delivery: this process ${perDelivery(fannedCost.process - baselineCost.process)}, ` +
        `database backends ${perDelivery(fannedCost.database - baselineCost.database)}; ` +
        `webhooks SQL statements per delivery ${sql === undefined ? "— (another process: not counted)" : `${(sql / Math.max(1, delivered)).toFixed(2)} (${sql} for ${delivered})`}`,
    );
    if (touched) for (const line of countersPer(touched, delivered)) console.log(`  webhooks, per delivery: ${line}`);
  } finally {
    receiver.closeAllConnections();
    receiver.close();
    await system.stop();
  }
}

/**
 * The statements the webhooks service sends, transactions' begin and commit
 * included. Counted as the service's query builder sends them, so only where
 * it runs in this process: undefined in the processes wiring (the local
 * Postgres has no pg_stat_statements to count them at the other end).
 */
function statementCounter(system: BenchSystem): { reset(): void; count(): number | undefined } {
  let count = 0;
  if (system.kind !== "processes") system.database("webhooks").on("query", () => count++);
  return {
    reset: () => (count = 0),
    count: () => (system.kind === "processes" ? undefined : count),
  };
}

/** The webhooks schema's counters (rows written, index entries read) at a reading; none for standalone, which has no Postgres to ask. */
function tableActivity(system: BenchSystem): { read(): Promise<Map<string, RelationCounter>>; since(before: Map<string, RelationCounter>): Promise<Map<string, RelationCounter> | undefined> } {
  const db = system.kind === "standalone" ? undefined : system.database("webhooks");
  const read = async () => (db ? schemaCounters(db, "webhooks") : new Map<string, RelationCounter>());
  return {
    read,
    since: async (before) => (db ? countersSince(before, await read()) : undefined),
  };
}

/**
 * CPU milliseconds spent from `start()` until the returned function is
 * called: by this process (the gateway and every service in the in-process
 * wirings, and the load), and by the database's backends (those connected
 * at both ends; the pools keep theirs). Zero for the database without
 * a local Postgres (standalone).
 */
async function cpuMeter(system: BenchSystem): Promise<{ start(): Promise<() => Promise<{ process: number; database: number }>> }> {
  const db: Knex | undefined = system.kind === "standalone" ? undefined : system.database("webhooks");
  const backends = async (): Promise<Map<number, number>> => {
    if (!db) return new Map();
    const { rows } = await db.raw<{ rows: { pid: number }[] }>("select pid from pg_stat_activity where datname = current_database()");
    const ticks = new Map<number, number>();
    for (const { pid } of rows) {
      try {
        const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
        ticks.set(pid, Number(fields[11]) + Number(fields[12]));
      } catch {
        // A backend that ended meanwhile.
      }
    }
    return ticks;
  };
  return {
    async start() {
      const before = process.cpuUsage();
      const dbBefore = await backends();
      return async () => {
        const used = process.cpuUsage(before);
        const dbAfter = await backends();
        let ticks = 0;
        for (const [pid, t] of dbAfter) if (dbBefore.has(pid)) ticks += t - dbBefore.get(pid)!;
        return { process: (used.user + used.system) / 1_000, database: (ticks * 1_000) / TICKS_PER_SECOND };
      };
    },
  };
}

/** Creates meetings at `rate` a second for `seconds`, each on its own; their latencies, when each was committed (answered), and how many got no answer or another status. */
async function createAtRate(url: string, key: string, rate: number, seconds: number): Promise<{ latencies: number[]; committedAt: Map<string, number>; failed: number }> {
  let failed = 0;
  const latencies: number[] = [];
  const committedAt = new Map<string, number>();
  const calls: Promise<void>[] = [];
  const start = performance.now();
  for (let i = 0; i < rate * seconds; i++) {
    const due = start + (i * 1_000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const sent = performance.now();
    calls.push(
      callApi(url, "POST", "/v1/meetings", { token: key, body: { title: `Bench ${i}`, duration: "30 mins", startTime: "2033-01-03T10:00:00Z", participants: ["p@example.com"], sendInvites: false } }).then((res) => {
        const now = performance.now();
        latencies.push(now - sent);
        if (res.status === 201) committedAt.set((res.body as { id: string }).id, now);
        else failed++;
      }, () => void failed++),
    );
  }
  await Promise.all(calls);
  return { latencies: latencies.sort((a, b) => a - b), committedAt, failed };
}
