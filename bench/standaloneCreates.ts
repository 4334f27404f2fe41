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
    const { pglite, statements: kept } = system.embeddedDatabase!;
    const byKind = new Map<string, number>();
    let statements = 0;
    const tally = (sql: string) => {
      if (sql.startsWith(SETTLED_MARK)) return;
      statements += 1;
      const kind = kindOf(sql);
      byKind.set(kind, (byKind.get(kind) ?? 0) + 1);
    };
    const query = pglite.query.bind(pglite);
    pglite.query = ((sql: string, ...rest: unknown[]) => {
      tally(sql);
      return (query as (...args: unknown[]) => unknown)(sql, ...rest);
    }) as typeof pglite.query;
    // Statements with parameters run on the ones the session keeps prepared, not through query.
    const run = kept.run.bind(kept);
    kept.run = ((searchPath: string, sql: string, ...rest: unknown[]) => {
      tally(sql);
      return (run as (...args: unknown[]) => unknown)(searchPath, sql, ...rest);
    }) as typeof kept.run;
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
      const top = [...byKind].sort((a, b) => b[1] - a[1]).slice(0, 25);
      for (const [kind, c] of top) console.log(`  ${(c / n).toFixed(2)}  ${kind}`);
    };
    await measured(`POST /v1/meetings at ${rate}/s`, rate, 32, creates(count, 2), options.profile);
    await measured("POST /v1/meetings flat out (32 at a time)", 5_000, 32, creates(count, 3), false);
    printTable("standalone creates (data on disk)", ["scenario", "offered/s", "requests", "median", "p95", "p99", "throughput/s", "statements/create", "thread busy ms/create", "CPU ms/create", "statuses"], rows);
  } finally {
    await system.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
