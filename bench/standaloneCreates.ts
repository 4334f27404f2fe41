/**
 * npm run bench -- standalone-creates [--quick] [--profile]
 *
 * What a create costs in standalone mode (`npm start`: the data on disk, so
 * the in-process bus keeps its events in the embedded Postgres), on its one
 * thread: PGlite statements per create (every statement the gateway, the
 * services, the outbox relay, the bus's event log and the consumers of
 * meeting.created run, counted until every outbox is empty and every consumer
 * has read every event), the thread's
 * busy time (wall clock: on a busy machine it counts the time the thread
 * waited for a core) and the process's CPU time per create (the load
 * generator's thread included), both with the quiet system's rate taken
 * off, and the latency of creates at a fixed rate and flat
 * out. `--profile` writes a CPU profile of the fixed-rate run.
 */
import { createLogger } from "@sched/logging";
import { SETTLED_MARK, System } from "@sched/standalone";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createUser } from "./lib/api.js";
import { runLoad, statusText, type LoadRequest } from "./lib/load.js";
import { ms, printTable } from "./lib/stats.js";
import { creates, type BenchOptions } from "./meetings.js";

/** A statement's kind: its first words, literals and lists left out. */
function kindOf(sql: string): string {
  return sql.replace(/\s+/g, " ").replace(/\$\d+(, \$\d+)*/g, "?").trim().slice(0, 90);
}

export async function benchStandaloneCreates(options: BenchOptions & { profile: boolean }): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "sched-standalone-creates-"));
  const adminToken = `adm_bench_${randomBytes(16).toString("hex")}`;
  const system = await new System({ wiring: { kind: "standalone", dataDir }, logger: createLogger({ name: "bench", level: "error" }), port: 0, adminToken, onStage: (stage, ms) => console.log(`  ${stage} (${ms.toFixed(0)} ms)`) }).start();
  try {
    const database = system.embeddedDatabase!;
    const { pglite, statements: kept } = database;
    // Per kind of statement: how many ran, and their wall time from the call until its answer (one at a time on the session).
    const byKind = new Map<string, { count: number; ms: number }>();
    let statements = 0;
    const tally = <R>(sql: string, call: () => Promise<R>): Promise<R> => {
      if (sql.startsWith(SETTLED_MARK)) return call();
      statements += 1;
      const kind = byKind.get(kindOf(sql)) ?? { count: 0, ms: 0 };
      byKind.set(kindOf(sql), kind);
      kind.count += 1;
      const from = performance.now();
      return call().finally(() => (kind.ms += performance.now() - from));
    };
    const query = pglite.query.bind(pglite);
    pglite.query = ((sql: string, ...rest: unknown[]) => tally(sql, () => (query as (...args: unknown[]) => Promise<unknown>)(sql, ...rest))) as typeof pglite.query;
    // Statements with parameters run on the ones the session keeps prepared, not through query.
    const run = kept.run.bind(kept);
    kept.run = ((searchPath: string, sql: string, ...rest: unknown[]) => tally(sql, () => (run as (...args: unknown[]) => Promise<unknown>)(searchPath, sql, ...rest))) as typeof kept.run;
    // A switch of the search path goes with the statement after it, in the same call: counted apart, not timed.
    const searchPathSwitch = database.searchPathSwitch.bind(database);
    database.searchPathSwitch = () => {
      const sql = searchPathSwitch();
      if (sql !== undefined) {
        const kind = byKind.get(`${kindOf(sql)} (sent with the next statement)`) ?? { count: 0, ms: 0 };
        byKind.set(`${kindOf(sql)} (sent with the next statement)`, kind);
        kind.count += 1;
      }
      return sql;
    };
    // Relays and timers poll while nothing happens: their rate when quiet is measured first and taken off.
    const quietSeconds = 3;
    const quietFrom = statements;
    const quietElu = performance.eventLoopUtilization();
    const quietCpu = process.cpuUsage();
    await new Promise((r) => setTimeout(r, quietSeconds * 1_000));
    const quietStatementsPerSecond = (statements - quietFrom) / quietSeconds;
    const quietBusyPerSecond = performance.eventLoopUtilization(quietElu).active / quietSeconds;
    const cpuMs = (used: NodeJS.CpuUsage) => (used.user + used.system) / 1_000;
    const quietCpuPerSecond = cpuMs(process.cpuUsage(quietCpu)) / quietSeconds;
    console.log(`quiet: ${quietStatementsPerSecond.toFixed(1)} statements/s, ${quietBusyPerSecond.toFixed(1)} ms/s of the thread, ${quietCpuPerSecond.toFixed(1)} ms/s of CPU`);
    // A run is over once every outbox is empty and every consumer has read every event (System.settled), twice
    // in a row: a slow consumer's tail may run no more statements a second than the quiet system does.
    const idle = async () => {
      let inARow = 0;
      while (inARow < 2) {
        await new Promise((r) => setTimeout(r, 100));
        inARow = (await system.settled()) ? inARow + 1 : 0;
      }
    };
    const user = await createUser(system.url, adminToken, { email: `bench-${randomBytes(4).toString("hex")}@example.com`, name: "Bench", timezone: "UTC" });
    const headers = { authorization: `Bearer ${user.key}` };
    const rate = 50;
    const count = options.quick ? 300 : 1_000;
    console.log("warming up");
    await runLoad({ baseUrl: system.url, headers, ratePerSecond: rate, concurrency: 32, requests: creates(150, 1) }).catch((err: unknown) => console.log(`warm-up: ${String(err)}`));
    await idle();
    console.log("warmed up");

    const rows: Array<Array<string | number>> = [];
    const measured = async (scenario: string, ratePerSecond: number, concurrency: number, requests: LoadRequest[], profile: boolean) => {
      byKind.clear();
      statements = 0;
      const session = profile ? new Session() : undefined;
      if (session) {
        session.connect();
        await session.post("Profiler.enable");
        await session.post("Profiler.start");
      }
      const elu = performance.eventLoopUtilization();
      const from = performance.now();
      const cpu = process.cpuUsage();
      const report = await runLoad({ baseUrl: system.url, headers, ratePerSecond, concurrency, requests }).catch((err: unknown) => {
        // Its load worker may die starting up (see runLoad) before it sent anything: once more.
        console.log(`${String(err)}; starting the load again`);
        return runLoad({ baseUrl: system.url, headers, ratePerSecond, concurrency, requests });
      });
      await idle();
      const seconds = (performance.now() - from) / 1_000;
      const busy = { active: performance.eventLoopUtilization(elu).active - quietBusyPerSecond * seconds };
      const cpuPerCreate = (cpuMs(process.cpuUsage(cpu)) - quietCpuPerSecond * seconds) / requests.length;
      const counted = statements;
      statements -= quietStatementsPerSecond * seconds;
      if (session) {
        const { profile: cpu } = await session.post("Profiler.stop");
        const file = join(tmpdir(), `standalone-creates-${Date.now()}.cpuprofile`);
        writeFileSync(file, JSON.stringify(cpu));
        console.log(`profile written to ${file}`);
        session.disconnect();
      }
      const n = requests.length;
      rows.push([scenario, ratePerSecond, n, ms(report.median), ms(report.p95), ms(report.p99), report.throughput.toFixed(0), (statements / n).toFixed(2), ms(busy.active / n), ms(cpuPerCreate), statusText(report.statuses)]);
      console.log(`${scenario}: median ${ms(report.median)} ms, p99 ${ms(report.p99)} ms, ${report.throughput.toFixed(0)}/s, ${(statements / n).toFixed(2)} statements (${(counted / n).toFixed(2)} counted, the quiet rate not taken off), ${ms(busy.active / n)} ms of the thread busy and ${ms(cpuPerCreate)} ms of CPU per create`);
      const top = [...byKind].sort((a, b) => b[1].ms - a[1].ms).slice(0, 25);
      const statementMs = [...byKind.values()].reduce((sum, kind) => sum + kind.ms, 0);
      console.log(`  statements' wall time: ${ms(statementMs / n)} ms a create; by kind, per create: count, ms`);
      for (const [kind, { count, ms: spent }] of top) console.log(`  ${(count / n).toFixed(2)}  ${(spent / n).toFixed(3)}  ${kind}`);
    };
    await measured(`POST /v1/meetings at ${rate}/s`, rate, 32, creates(count, 2), options.profile);
    await measured("POST /v1/meetings flat out (32 at a time)", 5_000, 32, creates(count, 3), false);
    printTable("standalone creates (data on disk)", ["scenario", "offered/s", "requests", "median", "p95", "p99", "throughput/s", "statements/create", "thread busy ms/create", "CPU ms/create", "statuses"], rows);
  } finally {
    await system.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
