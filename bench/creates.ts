/**
 * npm run bench -- creates [--quick] [--profile]
 *
 * `POST /v1/meetings` flat out (32 at a time) in processes wiring (the
 * gateway and every service a process of its own) on a nats-server and a
 * redis-server started for the run alone and a fresh Postgres database, in
 * rounds. After each round the system is left to finish what the creates set
 * off (the outbox relay, every consumer of `meeting.created`), so that the
 * figures hold the whole cost of a create:
 *
 * - CPU µs per create of every process, from `/proc/<pid>/stat`, with what
 *   each spends idle taken off; Postgres by the backends of each service's
 *   connections (their application name is the service's schema); of a Node
 *   process's, the part spent off its main thread (V8's optimizing compiler
 *   and garbage collector helpers), which its CPU profile does not see;
 * - SQL statements per create of every process, by kind (counted in `pg`'s
 *   client by a preloaded module, bench/lib/statementCounter.ts);
 * - NATS messages per create of every process, each way (the server's own
 *   count per connection, from its monitoring port);
 * - with --profile, every Node process's CPU by layer (V8 CPU profiles of the
 *   rounds), in µs per create.
 */
import { serviceModules } from "@sched/standalone";
import { createTestDatabase, startGatewayProcess, startServiceProcess, uniqueSuffix, type ServiceProcess } from "@sched/testing";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { callApi, createUser } from "./lib/api.js";
import { cpuSnapshot, cpuUsed, type CpuGroup } from "./lib/cpuTime.js";
import { runLoad, statusText } from "./lib/load.js";
import { GARBAGE_COLLECTION, GATEWAY_LAYERS, layerShares, NODE_ITSELF, SERVICE_LAYERS } from "./lib/profileLayers.js";
import { backendsOf, natsMessagesByConnection, startOwnServers, type Cleanup } from "./lib/servers.js";
import { statementsFile } from "./lib/statementCounter.js";
import { ms } from "./lib/stats.js";

export interface CreatesOptions {
  quick: boolean;
  profile: boolean;
}

const CONCURRENCY = 32;
const STATEMENT_COUNTER = fileURLToPath(new URL("./lib/statementCounter.ts", import.meta.url));
const load = () => loadavg().map((l) => l.toFixed(2)).join(" ");
const sleep = (msToWait: number) => new Promise((r) => setTimeout(r, msToWait));
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

export async function benchCreates(options: CreatesOptions): Promise<void> {
  const cleanup: Cleanup = [];
  try {
    await run(options, cleanup);
  } finally {
    for (const step of cleanup.reverse()) await Promise.resolve(step()).catch(() => undefined);
  }
}

async function run(options: CreatesOptions, cleanup: Cleanup): Promise<void> {
  const { nats, redisUrl, redisPid, admin } = await startOwnServers("creates", cleanup);
  // Kept after the run, for a second look.
  const profileDir = options.profile ? mkdtempSync(join(tmpdir(), "creates-profiles-")) : "";
  const database = await createTestDatabase();
  cleanup.push(() => database.drop());
  const databaseName = new URL(database.url).pathname.slice(1);

  const adminToken = `adm_bench_${randomBytes(16).toString("hex")}`;
  const env = {
    NATS_URL: nats.url,
    DATABASE_URL: database.url,
    REDIS_URL: redisUrl,
    BUS_NAMESPACE: `bench${uniqueSuffix()}`,
    ADMIN_TOKEN: adminToken,
    LOG_LEVEL: "error",
    // The dashboard's pages on a port of their own choosing: two runs at once would both want 8081.
    DASHBOARD_PORT: "0",
  };
  const processOptions = (name: string) => ({
    nodeArgs: options.profile ? ["--cpu-prof", `--cpu-prof-dir=${join(profileDir, name)}`] : [],
    imports: [STATEMENT_COUNTER],
  });
  const processes = new Map<string, ServiceProcess>();
  const starts = await Promise.allSettled([
    ...serviceModules.map(async (m) => processes.set(m.name, await startServiceProcess(m.name, { ...m.standaloneEnv, ...env }, processOptions(m.name)))),
    (async () => processes.set("gateway", await startGatewayProcess(env, processOptions("gateway"))))(),
  ]);
  // SIGTERM: a graceful stop writes the CPU profiles.
  cleanup.push(() => Promise.all([...processes.values()].map((p) => p.kill("SIGTERM"))));
  cleanup.push(() => [...processes.values()].forEach((p) => rmSync(statementsFile(p.pid), { force: true })));
  const failed = starts.find((s) => s.status === "rejected");
  if (failed) throw failed.reason;
  const gateway = processes.get("gateway")!;
  const names = [...processes.keys()].sort();
  console.log(`started ${processes.size} processes on a NATS and a Redis of their own; load average ${load()}`);

  const user = await createUser(gateway.url, adminToken, { email: `bench-${uniqueSuffix()}@example.com`, name: "Bench", timezone: "UTC" });
  const base = Math.ceil(Date.now() / 3_600_000) * 3_600_000 + 86_400_000;
  let next = 0;
  const body = () => {
    const i = next++;
    return { title: `Bench meeting ${i}`, duration: "30 mins", startTime: new Date(base + i * 3_600_000).toISOString().replace(".000Z", "Z"), participants: [`guest${i % 10}@example.com`], sendInvites: false };
  };
  const createMany = (count: number) =>
    runLoad({
      baseUrl: gateway.url,
      headers: { authorization: `Bearer ${user.key}` },
      ratePerSecond: 1_000_000,
      concurrency: CONCURRENCY,
      requests: Array.from({ length: count }, () => ({ method: "POST", path: "/v1/meetings", body: JSON.stringify(body()) })),
    });
  const first = await callApi(gateway.url, "POST", "/v1/meetings", { token: user.key, body: body() });
  if (first.status !== 201) throw new Error(`POST /v1/meetings answered ${first.status}: ${JSON.stringify(first.body)}`);

  const schemas = serviceModules.map((m) => m.schema);
  const groups: CpuGroup[] = [
    ...names.map((n) => ({ name: n, pids: () => [processes.get(n)!.pid] })),
    ...schemas.map((schema) => ({ name: `postgres (${schema})`, pids: () => backendsOf(admin, databaseName, schema) })),
    { name: "postgres (other)", pids: async () => (await backendsOf(admin, databaseName)).filter((pid) => !other.has(pid)) },
    { name: "nats-server", pids: () => [nats.pid] },
    { name: "redis-server", pids: () => [redisPid] },
  ];
  // The backends of the services' own connections, so that "other" holds only the rest.
  const other = new Set<number>();
  const refreshOwn = async () => {
    other.clear();
    for (const schema of schemas) for (const pid of await backendsOf(admin, databaseName, schema)) other.add(pid);
  };

  // Warm up: pools filled, statements prepared, code optimized; then let everything settle.
  // Optimized takes thousands: after 300 creates V8 was still optimizing through the rounds, on
  // its helper threads (a third of the gateway's CPU) while the main thread ran slower code, and
  // a create cost 1,850–2,750 µs against 1,400–1,900 after 3,000 (docs/benchmarks.md, "Creates
  // flat out measured warm"). A replica in service has long been past it.
  await createMany(options.quick ? 3_000 : 5_000);
  await sleep(3_000);
  await refreshOwn();
  const idleSeconds = options.quick ? 3 : 5;
  const idleBefore = await cpuSnapshot(groups);
  await sleep(idleSeconds * 1_000);
  const idleAfter = await cpuSnapshot(groups);
  const idleUs = cpuUsed(idleBefore, idleAfter);
  const idleRate = (group: string) => (idleUs.get(group) ?? 0) / (idleAfter.atMs - idleBefore.atMs);
  const idleTotalRate = [...idleUs.values()].reduce((a, b) => a + b, 0) / (idleAfter.atMs - idleBefore.atMs);

  /** Waits until the whole system spends no more than it does idle (plus 5 % of a core): what the creates set off is done. */
  const settle = async () => {
    let before = await cpuSnapshot(groups);
    for (let quiet = 0; quiet < 2; ) {
      await sleep(500);
      const after = await cpuSnapshot(groups);
      const rate = [...cpuUsed(before, after).values()].reduce((a, b) => a + b, 0) / (after.atMs - before.atMs);
      quiet = rate < idleTotalRate + 50 ? quiet + 1 : 0;
      before = after;
    }
  };
  const statementsNow = async () => {
    for (const p of processes.values()) p.signal("SIGUSR2");
    await sleep(300);
    const byProcess = new Map<string, Record<string, number>>();
    for (const n of names) {
      const file = statementsFile(processes.get(n)!.pid);
      byProcess.set(n, existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as Record<string, number>) : {});
    }
    return byProcess;
  };

  const perRound = options.quick ? 1_500 : 4_000;
  const rounds = options.quick ? 2 : 3;
  const cpuRounds: Array<Map<string, number>> = [];
  const offMainRounds: Array<Map<string, number>> = [];
  const throughputs: number[] = [];
  const windows: Array<[number, number]> = [];
  const statementsBefore = await statementsNow();
  const messagesBefore = await natsMessagesByConnection(nats.monitorUrl);
  let created = 0;
  for (let r = 1; r <= rounds; r++) {
    await refreshOwn();
    const before = await cpuSnapshot(groups);
    const fromUs = Number(process.hrtime.bigint() / 1_000n);
    const report = await createMany(perRound);
    await settle();
    const toUs = Number(process.hrtime.bigint() / 1_000n);
    const after = await cpuSnapshot(groups);
    const used = cpuUsed(before, after);
    const usedByMain = cpuUsed(before, after, "main");
    // The share of each Node process's CPU spent off its main thread, idle time in both counts.
    offMainRounds.push(new Map(names.map((n) => [n, (used.get(n) ?? 0) > 0 ? 1 - (usedByMain.get(n) ?? 0) / used.get(n)! : 0])));
    for (const [group, us] of used) used.set(group, Math.max(0, us - idleRate(group) * (after.atMs - before.atMs)));
    const ok = report.statuses["201"] ?? 0;
    created += ok;
    cpuRounds.push(new Map([...used].map(([g, us]) => [g, us / Math.max(1, ok)])));
    throughputs.push(report.throughput);
    windows.push([fromUs, toUs]);
    const total = [...used.values()].reduce((a, b) => a + b, 0) / Math.max(1, ok);
    console.log(`round ${r}: ${report.throughput.toFixed(0)}/s, median ${ms(report.median)} ms, p99 ${ms(report.p99)} ms, ${total.toFixed(0)} µs CPU per create (${statusText(report.statuses)}; load ${load()})`);
  }
  const statementsAfter = await statementsNow();
  const messagesAfter = await natsMessagesByConnection(nats.monitorUrl);

  const perCreate = (group: string) => median(cpuRounds.map((c) => c.get(group) ?? 0));
  const totals = cpuRounds.map((c) => [...c.values()].reduce((a, b) => a + b, 0));
  console.log(`\nCreates flat out (${CONCURRENCY} at a time, ${rounds} rounds of ${perRound}), ${new Date().toISOString()}, load average ${load()}:`);
  console.log(`creates/s by round: ${throughputs.map((t) => t.toFixed(0)).join(", ")} (median ${median(throughputs).toFixed(0)})`);
  const offMainUs = (group: string) => perCreate(group) * median(offMainRounds.map((r) => r.get(group) ?? 0));
  const offMain = (group: string) => (names.includes(group) ? offMainUs(group).toFixed(0) : "—");
  console.log(`\n| process | CPU µs per create (median round) | of it, off the main thread |\n|---|---|---|`);
  for (const g of groups) console.log(`| ${g.name} | ${perCreate(g.name).toFixed(0)} | ${offMain(g.name)} |`);
  console.log(`| all | ${median(totals).toFixed(0)} | |`);

  console.log(`\nSQL statements per create, by process and kind:\n`);
  let allStatements = 0;
  for (const n of names) {
    const before = statementsBefore.get(n) ?? {};
    const grown = Object.entries(statementsAfter.get(n) ?? {})
      .map(([kind, count]) => [kind, count - (before[kind] ?? 0)] as const)
      .filter(([, d]) => d > 0)
      .sort((a, b) => b[1] - a[1]);
    const sum = grown.reduce((a, [, d]) => a + d, 0);
    if (sum === 0) continue;
    allStatements += sum;
    console.log(`${n}: ${(sum / created).toFixed(2)}`);
    for (const [kind, d] of grown) console.log(`  ${(d / created).toFixed(3)}  ${kind}`);
  }
  console.log(`all: ${(allStatements / created).toFixed(2)} statements per create`);
  console.log(`\nNATS messages per create, by process (sent to the server / sent by it):\n`);
  const sentAndReceived = [...messagesAfter].map(([n, after]) => {
    const before = messagesBefore.get(n) ?? { in: 0, out: 0 };
    return { n, in: (after.in - before.in) / created, out: (after.out - before.out) / created };
  });
  for (const m of sentAndReceived.filter((m) => m.in + m.out >= 0.01).sort((a, b) => b.in + b.out - a.in - a.out)) console.log(`${m.n}: ${m.in.toFixed(2)} / ${m.out.toFixed(2)}`);
  const allMessages = sentAndReceived.reduce((a, m) => a + m.in + m.out, 0);
  console.log(`all: ${allMessages.toFixed(2)} messages per create`);
  console.log(`creates_per_s=${median(throughputs).toFixed(0)} cpu_us_per_create=${median(totals).toFixed(0)} statements_per_create=${(allStatements / created).toFixed(2)} load=${load()}`);

  if (options.profile) {
    await Promise.all([...processes.values()].map((p) => p.kill("SIGTERM")));
    // The profiles sample the main thread: its share of the process's CPU is what their layers divide.
    console.log(`\nCPU µs per create by layer (share of each process's profiled samples × its main thread's CPU per create):\n`);
    const layerNames = [...new Set([...GATEWAY_LAYERS, ...SERVICE_LAYERS].map((l) => l.name).concat(NODE_ITSELF, GARBAGE_COLLECTION))];
    const columns = names.filter((n) => perCreate(n) >= 20);
    const shares = columns.map((n) => {
      const dir = join(profileDir, n);
      const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
      const byLayer = new Map<string, number>();
      let busy = 0;
      if (file) {
        for (const [from, to] of windows) {
          const s = layerShares(join(dir, file), n === "gateway" ? GATEWAY_LAYERS : SERVICE_LAYERS, from, to);
          busy += s.busySamples;
          for (const [l, c] of s.byLayer) byLayer.set(l, (byLayer.get(l) ?? 0) + c);
        }
      }
      return { n, busy, byLayer };
    });
    console.log(`| layer | ${columns.join(" | ")} |\n|---|${columns.map(() => "---").join("|")}|`);
    for (const layer of layerNames) {
      const cells = shares.map((s) => (s.busy ? (((perCreate(s.n) - offMainUs(s.n)) * (s.byLayer.get(layer) ?? 0)) / s.busy).toFixed(0) : "—"));
      if (cells.some((c) => c !== "0" && c !== "—")) console.log(`| ${layer} | ${cells.join(" | ")} |`);
    }
    console.log(`| off the main thread (V8's compiler, GC helpers; the profiler's sampling) | ${columns.map((n) => offMainUs(n).toFixed(0)).join(" | ")} |`);
    console.log(`| all | ${columns.map((n) => perCreate(n).toFixed(0)).join(" | ")} |`);
    console.log(`\n(profiles kept in ${profileDir}; the rounds' windows in monotonic µs: ${JSON.stringify(windows)})`);
  }
}
