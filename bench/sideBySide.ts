/**
 * npm run bench -- side-by-side [--quick] [--profile] [--list]
 *
 * `GET /v1/meetings/:id` through the whole system (processes wiring: the
 * gateway and every service a process of its own) beside the bare chain of
 * bench/chain (express → Redis rate limiter → NATS → service → a primary-key
 * select), in one run and on the same NATS and Redis, started here for the
 * run alone so that every CPU second they spend is this benchmark's:
 *
 * - throughput flat out (50 at a time), in alternating rounds, and their ratio;
 * - latency at 200 requests/s of the get and of the list of 100 on both
 *   sides (the chain's rows padded to the size of the project's meetings, so
 *   that both lists answer some 28 KB);
 * - CPU per request of each process (Postgres counted by the connections of
 *   each side's database), less what each spends idle, read from /proc: a
 *   figure that holds when other work shares the machine;
 * - creates flat out;
 * - with --profile, the gateway's and the meetings service's CPU by layer
 *   (V8 CPU profiles of the flat-out get rounds), in µs per request;
 * - with --list, only the project and the list's latency at 200/s: a run of
 *   a minute, to try a change against the list's tail;
 * - with --gc, the collections of the gateway and the meetings service while
 *   the list is measured (node's `--trace-gc-nvp`, read from their output).
 */
import { serviceModules } from "@sched/standalone";
import { createTestDatabase, eventually, freePort, startGatewayProcess, startServiceProcess, uniqueSuffix, type ServiceProcess } from "@sched/testing";
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { callApi, createUser } from "./lib/api.js";
import { backendsOf, startOwnServers, type Cleanup } from "./lib/servers.js";
import { cpuSnapshot, cpuUsed, type CpuGroup, type CpuSnapshot } from "./lib/cpuTime.js";
import { runLoad, statusText, type LoadReport, type LoadRequest } from "./lib/load.js";
import { GARBAGE_COLLECTION, GATEWAY_LAYERS, layerShares, NODE_ITSELF, SERVICE_LAYERS, type Layer } from "./lib/profileLayers.js";
import { random } from "./lib/seed.js";
import { gcSummary, gcText } from "./lib/gcTrace.js";
import { ms, slowDuringPauses, slowRequests } from "./lib/stats.js";

export interface SideBySideOptions {
  quick: boolean;
  profile: boolean;
  listOnly: boolean;
  gc: boolean;
}

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CHAIN_ROWS = 100_000;
const MEETINGS = 500;
const FLAT_OUT_CONNECTIONS = 50;
/** Requests sent at 200/s before each measured run at that rate. */
const AT_200_WARM_UP = 400;
/** The processes on the list's path, whose collections --gc reports. */
const GC_TRACED = ["gateway", "meetings"];
/** The services profiled with --profile: the one each request reaches, and the dashboard that stores every request's log entry. */
const PROFILED_SERVICES = ["meetings", "dashboard"];
/** Every process --profile profiles: the project's gateway and those services, and the chain's two. */
const PROFILED = ["gateway", ...PROFILED_SERVICES, "chain-gateway", "chain-service"];

const load = () => loadavg().map((l) => l.toFixed(2)).join(" ");
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** A process of the bare chain, ready once it prints "ready". */
async function startChainProcess(file: string, settings: Record<string, string | number>, nodeArgs: string[]): Promise<{ pid: number; child: ChildProcess }> {
  const child = spawn(process.execPath, [...nodeArgs, "--import", "tsx", join(ROOT, "bench/chain", file), JSON.stringify(settings)], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  await eventually(() => {
    if (child.exitCode !== null) throw new Error(`chain ${file} exited: ${output}`);
    return output.includes("ready");
  }, 60_000, 50);
  return { pid: child.pid!, child };
}

interface Side {
  name: string;
  url: string;
  headers: Record<string, string>;
  next: () => LoadRequest;
  groups: CpuGroup[];
  rounds: LoadReport[];
  cpu: Array<Map<string, number>>;
  profileWindows: Array<[number, number]>;
}

export async function benchSideBySide(options: SideBySideOptions): Promise<void> {
  const cleanup: Cleanup = [];
  const stopAll = async () => {
    for (const step of cleanup.reverse()) await Promise.resolve(step()).catch(() => undefined);
  };
  try {
    await run(options, cleanup);
  } finally {
    await stopAll();
  }
}

async function run(options: SideBySideOptions, cleanup: Cleanup): Promise<void> {
  console.log(`load average at the start: ${load()}`);
  const { nats, redisUrl, redisPid, admin } = await startOwnServers("side-by-side", cleanup);
  // Kept after the run, for a second look (bench/lib/profileLayers.ts reads them).
  const profileDir = options.profile ? mkdtempSync(join(tmpdir(), "side-by-side-profiles-")) : "";
  /** A process's node options: its CPU profile with --profile, its collections' trace with --gc, each only for the processes they are for. */
  const nodeArgsOf = (name: string) => [
    ...(options.profile && PROFILED.includes(name) ? ["--cpu-prof", `--cpu-prof-dir=${join(profileDir, name)}`] : []),
    ...(options.gc && GC_TRACED.includes(name) ? ["--trace-gc-nvp"] : []),
  ];

  // ---- the project, every service a process of its own
  const projectDb = await createTestDatabase();
  cleanup.push(() => projectDb.drop());
  const projectDbName = new URL(projectDb.url).pathname.slice(1);
  const adminToken = `adm_bench_${randomBytes(16).toString("hex")}`;
  const env = { NATS_URL: nats.url, DATABASE_URL: projectDb.url, REDIS_URL: redisUrl, BUS_NAMESPACE: `bench${uniqueSuffix()}`, ADMIN_TOKEN: adminToken, LOG_LEVEL: "error", DASHBOARD_PORT: "0" };
  const processes = new Map<string, ServiceProcess>();
  const starts = await Promise.allSettled([
    ...serviceModules.map(async (m) =>
      processes.set(m.name, await startServiceProcess(m.name, { ...m.standaloneEnv, ...env }, { nodeArgs: nodeArgsOf(m.name) })),
    ),
    (async () => processes.set("gateway", await startGatewayProcess(env, { nodeArgs: nodeArgsOf("gateway") })))(),
  ]);
  // SIGTERM: a graceful stop writes the CPU profiles.
  cleanup.push(() => Promise.all([...processes.values()].map((p) => p.kill("SIGTERM"))));
  const failed = starts.find((s) => s.status === "rejected");
  if (failed) throw failed.reason;
  const gateway = processes.get("gateway")!;
  console.log(`started: the chain and the project (${processes.size} processes) on NATS ${nats.url} and Redis ${redisUrl} of their own; load average ${load()}`);

  // ---- the project's data: a user whose key's limits never refuse, and meetings
  const user = await createUser(gateway.url, adminToken, { email: `bench-${uniqueSuffix()}@example.com`, name: "Bench", timezone: "UTC" });
  const base = Math.ceil(Date.now() / 3_600_000) * 3_600_000 + 86_400_000;
  const meetingBody = (i: number) => ({ title: `Bench meeting ${i}`, duration: "30 mins", startTime: new Date(base + i * 3_600_000).toISOString().replace(".000Z", "Z"), participants: [`guest${i % 10}@example.com`], sendInvites: false });
  const ids: string[] = [];
  let made = 0;
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (made < MEETINGS) {
        const i = made++;
        const res = await callApi(gateway.url, "POST", "/v1/meetings", { token: user.key, body: meetingBody(i) });
        if (res.status !== 201) throw new Error(`POST /v1/meetings answered ${res.status}: ${JSON.stringify(res.body)}`);
        ids.push(String((res.body as { id: string }).id));
      }
    }),
  );
  const headers = { authorization: `Bearer ${user.key}` };
  const pick = random(11);

  // ---- latency at 200 requests/s: 400 to warm, then the measured run
  const seconds = options.quick ? 5 : 20;
  const at200 = async (url: string, hdrs: Record<string, string>, next: () => LoadRequest) => {
    await runLoad({ baseUrl: url, headers: hdrs, ratePerSecond: 200, concurrency: 8, requests: Array.from({ length: AT_200_WARM_UP }, next) });
    return runLoad({ baseUrl: url, headers: hdrs, ratePerSecond: 200, concurrency: 8, requests: Array.from({ length: 200 * seconds }, next) });
  };
  /** The list at 200/s, and with --gc what its path's processes wrote meanwhile. */
  const listAt200 = async () => {
    const traced = GC_TRACED.map((name) => processes.get(name)!);
    const from = traced.map((p) => p.output().length);
    const list = await at200(gateway.url, headers, listOf100);
    const gc = options.gc ? traced.map((p, i) => `${GC_TRACED[i]} collections while the list was measured (with its warm-up): ${gcText(gcSummary(p.output().slice(from[i])))}`) : [];
    return { list, gc };
  };
  const listOf100 = (): LoadRequest => ({ method: "GET", path: "/v1/meetings?limit=100" });
  if (options.listOnly) {
    const { list, gc } = await listAt200();
    console.log(`\nThe list at 200 requests/s (${200 * seconds} requests, up to 8 at a time), ${new Date().toISOString()}, load average ${load()}:`);
    console.log(`list_median_ms=${ms(list.median)} list_p95_ms=${ms(list.p95)} list_p99_ms=${ms(list.p99)} list_max_ms=${ms(list.max)} ${slowText(list)} (${statusText(list.statuses)})`);
    for (const line of gc) console.log(line);
    return;
  }

  // ---- the bare chain: its table, its service and gateway
  const chainDb = await createTestDatabase();
  cleanup.push(() => chainDb.drop());
  const chainDbName = new URL(chainDb.url).pathname.slice(1);
  const seed = new pg.Client({ connectionString: chainDb.url });
  await seed.connect();
  // detail: only the list reads it; 192 characters make a row's JSON about the size of a meeting's.
  await seed.query(`create table items (id int primary key, name text not null, qty int not null, created_at timestamptz not null default now(), detail text not null);
    insert into items (id, name, qty, detail) select g, 'item-' || g, g % 1000, repeat(md5(g::text), 6) from generate_series(1, ${CHAIN_ROWS}) g; analyze items;`);
  await seed.end();
  const chainNamespace = `chain${uniqueSuffix()}`;
  const subject = `${chainNamespace}.item.get`;
  const listSubject = `${chainNamespace}.item.list`;
  const chainService = await startChainProcess("service.ts", { natsUrl: nats.url, databaseUrl: chainDb.url, subject, listSubject }, nodeArgsOf("chain-service"));
  cleanup.push(() => chainService.child.kill("SIGTERM"));
  const chainPort = await freePort();
  const chainGateway = await startChainProcess("gateway.ts", { natsUrl: nats.url, redisUrl, subject, listSubject, port: chainPort, rows: CHAIN_ROWS }, nodeArgsOf("chain-gateway"));
  cleanup.push(() => chainGateway.child.kill("SIGTERM"));

  const groupOf = (name: string, pids: () => Promise<number[]> | number[]): CpuGroup => ({ name, pids });
  const shared = [groupOf("nats-server", () => [nats.pid]), groupOf("redis-server", () => [redisPid])];
  const chain: Side = {
    name: "chain",
    url: `http://127.0.0.1:${chainPort}`,
    headers: {},
    next: () => ({ method: "GET", path: "/item/rand" }),
    groups: [
      groupOf("gateway", () => [chainGateway.pid]),
      groupOf("service", () => [chainService.pid]),
      groupOf("postgres", () => backendsOf(admin, chainDbName)),
      ...shared,
    ],
    rounds: [],
    cpu: [],
    profileWindows: [],
  };
  const project: Side = {
    name: "project",
    url: gateway.url,
    headers,
    next: () => ({ method: "GET", path: `/v1/meetings/${ids[Math.floor(pick() * ids.length)]}` }),
    groups: [
      groupOf("gateway", () => [gateway.pid]),
      groupOf("service", () => [processes.get("meetings")!.pid]),
      groupOf("postgres", () => backendsOf(admin, projectDbName)),
      ...shared,
      ...[...processes.keys()].filter((n) => n !== "gateway" && n !== "meetings").map((n) => groupOf(n, () => [processes.get(n)!.pid])),
    ],
    rounds: [],
    cpu: [],
    profileWindows: [],
  };
  const sides = [chain, project];

  // ---- what each process spends with no request at all (pollers, heartbeats), taken off the rounds' figures
  const idleSeconds = options.quick ? 3 : 5;
  const idleGroups = [...chain.groups, ...project.groups.filter((g) => !shared.includes(g))].map((g, i) => ({ ...g, name: `${i < chain.groups.length ? "chain" : "project"} ${g.name}` }));
  const idleBefore = await cpuSnapshot(idleGroups);
  await new Promise((r) => setTimeout(r, idleSeconds * 1_000));
  const idleAfter = await cpuSnapshot(idleGroups);
  const idleUs = cpuUsed(idleBefore, idleAfter);
  const idlePerMs = (side: Side, group: string) => {
    const key = group === "nats-server" || group === "redis-server" ? `chain ${group}` : `${side.name} ${group}`;
    return (idleUs.get(key) ?? 0) / (idleAfter.atMs - idleBefore.atMs);
  };
  /** The CPU µs each of the side's processes used between two snapshots, less what it spends idle over that time. */
  const busyUsed = (side: Side, before: CpuSnapshot, after: CpuSnapshot) => {
    const used = cpuUsed(before, after);
    for (const [group, us] of used) used.set(group, Math.max(0, us - idlePerMs(side, group) * (after.atMs - before.atMs)));
    return used;
  };

  // ---- throughput flat out, alternating
  const perRound = options.quick ? 3_000 : 10_000;
  const rounds = options.quick ? 2 : 3;
  const flatOut = async (side: Side, count: number, keep: boolean) => {
    const requests = Array.from({ length: count }, () => side.next());
    const before = await cpuSnapshot(side.groups);
    const fromUs = Number(process.hrtime.bigint() / 1_000n);
    const report = await runLoad({ baseUrl: side.url, headers: side.headers, ratePerSecond: 1_000_000, concurrency: FLAT_OUT_CONNECTIONS, requests });
    const toUs = Number(process.hrtime.bigint() / 1_000n);
    const after = await cpuSnapshot(side.groups);
    if (!keep) return;
    const used = busyUsed(side, before, after);
    side.rounds.push(report);
    side.cpu.push(used);
    side.profileWindows.push([fromUs, toUs]);
    const total = [...used.values()].reduce((a, b) => a + b, 0);
    console.log(`  ${side.name.padEnd(8)} ${report.throughput.toFixed(0).padStart(6)}/s  median ${ms(report.median)} ms  p99 ${ms(report.p99)} ms  ${(total / report.count).toFixed(0)} µs CPU/request  (${statusText(report.statuses)}; load ${load()})`);
  };
  for (const side of sides) await flatOut(side, 1_000, false);
  for (let r = 1; r <= rounds; r++) {
    console.log(`round ${r}`);
    for (const side of sides) await flatOut(side, perRound, true);
  }

  // ---- latency at 200 requests/s
  const chainListOf100 = (): LoadRequest => ({ method: "GET", path: "/items?limit=100" });
  /** A run at 200/s with the CPU it cost the side's processes, idle spending taken off, per request (its warm-up's included). */
  const withCpu = async <T>(side: Side, measure: () => Promise<T>) => {
    const before = await cpuSnapshot(side.groups);
    const result = await measure();
    const after = await cpuSnapshot(side.groups);
    const us = [...busyUsed(side, before, after).values()].reduce((a, b) => a + b, 0);
    return { result, cpuPerRequestUs: us / (AT_200_WARM_UP + 200 * seconds) };
  };
  const chainGet = await at200(chain.url, chain.headers, chain.next);
  const projectGet = await at200(project.url, headers, project.next);
  const chainList = await withCpu(chain, () => at200(chain.url, chain.headers, chainListOf100));
  const projectList = await withCpu(project, listAt200);
  const latency = { chain: chainGet, get: projectGet, chainList: chainList.result, list: projectList.result };
  const answerBytes = async (url: string, hdrs: Record<string, string>) => (await (await fetch(url, { headers: hdrs })).arrayBuffer()).byteLength;
  const listBytes = { chain: await answerBytes(`${chain.url}/items?limit=100`, {}), project: await answerBytes(`${gateway.url}/v1/meetings?limit=100`, headers) };

  // ---- creates flat out (32 at a time)
  const creates = options.quick ? 1_500 : 5_000;
  const createReport = await runLoad({
    baseUrl: gateway.url,
    headers,
    ratePerSecond: 1_000_000,
    concurrency: 32,
    requests: Array.from({ length: creates }, (_, i) => ({ method: "POST", path: "/v1/meetings", body: JSON.stringify(meetingBody(MEETINGS + i)) })),
  });

  // ---- the report
  const endLoad = load();
  const rps = (side: Side) => median(side.rounds.map((r) => r.throughput));
  const ratio = rps(project) / rps(chain);
  const bad = (r: LoadReport) => Object.entries(r.statuses).filter(([s]) => !s.startsWith("2")).reduce((a, [, n]) => a + n, 0);
  console.log(`\nSide by side, ${new Date().toISOString()}, load average at the end ${endLoad}`);
  console.log(`\nThroughput flat out (${FLAT_OUT_CONNECTIONS} at a time, ${rounds} alternating rounds of ${perRound} requests; median round):\n`);
  console.log("| | req/s (rounds) | CPU µs/request | non-2xx |");
  console.log("|---|---|---|---|");
  const cpuPerRequest = (side: Side, group?: string) =>
    median(side.cpu.map((used, i) => (group ? used.get(group) ?? 0 : [...used.values()].reduce((a, b) => a + b, 0)) / side.rounds[i]!.count));
  for (const side of sides) {
    console.log(`| ${side.name} | ${rps(side).toFixed(0)} (${side.rounds.map((r) => r.throughput.toFixed(0)).join(", ")}) | ${cpuPerRequest(side).toFixed(0)} | ${side.rounds.reduce((a, r) => a + bad(r), 0)} |`);
  }
  console.log(`\nratio ${ratio.toFixed(2)} (project/chain throughput); CPU per request ${(cpuPerRequest(project) / cpuPerRequest(chain)).toFixed(2)}× the chain's`);
  console.log("\nCPU µs per request by process (idle spending taken off):\n");
  const groupNames = [...new Set(sides.flatMap((s) => s.groups.map((g) => g.name)))];
  console.log(`| process | chain | project |\n|---|---|---|`);
  for (const g of groupNames) console.log(`| ${g} | ${chain.groups.some((x) => x.name === g) ? cpuPerRequest(chain, g).toFixed(0) : "—"} | ${project.groups.some((x) => x.name === g) ? cpuPerRequest(project, g).toFixed(0) : "—"} |`);
  console.log(`\nAt 200 requests/s (${200 * seconds} requests, up to 8 at a time), ms:\n`);
  console.log("| | median | p95 | p99 | max | non-2xx |\n|---|---|---|---|---|---|");
  const rows = [
    ["chain `GET /item/rand`", latency.chain],
    ["project `GET /v1/meetings/:id`", latency.get],
    [`chain \`GET /items?limit=100\` (${(listBytes.chain / 1024).toFixed(1)} KB)`, latency.chainList],
    [`project \`GET /v1/meetings?limit=100\` (${(listBytes.project / 1024).toFixed(1)} KB)`, latency.list.list],
  ] as const;
  for (const [name, r] of rows) {
    console.log(`| ${name} | ${ms(r.median)} | ${ms(r.p95)} | ${ms(r.p99)} | ${ms(r.max)} | ${bad(r)} |`);
  }
  console.log(`\nthe list of 100, CPU µs per request at 200/s: chain ${chainList.cpuPerRequestUs.toFixed(0)}, project ${projectList.cpuPerRequestUs.toFixed(0)} (${(projectList.cpuPerRequestUs / chainList.cpuPerRequestUs).toFixed(2)}×)`);
  console.log(`the list: ${slowText(latency.list.list)}`);
  for (const line of latency.list.gc) console.log(line);
  console.log(`\nCreates flat out (32 at a time): ${createReport.throughput.toFixed(0)}/s, median ${ms(createReport.median)} ms, p99 ${ms(createReport.p99)} ms (${statusText(createReport.statuses)})`);
  console.log(`ratio=${ratio.toFixed(3)} project_rps=${rps(project).toFixed(0)} chain_rps=${rps(chain).toFixed(0)} cpu_ratio=${(cpuPerRequest(project) / cpuPerRequest(chain)).toFixed(2)} get_p50_ms=${ms(latency.get.median)} get_p99_ms=${ms(latency.get.p99)} list_p99_ms=${ms(latency.list.list.p99)} chain_list_p99_ms=${ms(latency.chainList.p99)} list_cpu_ratio=${(projectList.cpuPerRequestUs / chainList.cpuPerRequestUs).toFixed(2)} creates_per_s=${createReport.throughput.toFixed(0)} load=${endLoad}`);

  if (options.profile) {
    // Stop the profiled processes gracefully so they write their profiles, then read the flat-out rounds' windows.
    await Promise.all([gateway.kill("SIGTERM"), ...PROFILED_SERVICES.map((n) => processes.get(n)!.kill("SIGTERM"))]);
    chainGateway.child.kill("SIGTERM");
    chainService.child.kill("SIGTERM");
    await eventually(() => PROFILED.every((n) => profileOf(profileDir, n)), 30_000, 200).catch(() => undefined);
    const table = (title: string, entries: Array<{ side: Side; name: string; layers: Layer[] }>) => {
      const shares = entries.map(({ side, name, layers }) => {
        const file = profileOf(profileDir, name);
        if (!file) return undefined;
        let busy = 0;
        const byLayer = new Map<string, number>();
        for (const [from, to] of side.profileWindows) {
          const s = layerShares(file, layers, from, to);
          busy += s.busySamples;
          for (const [l, n] of s.byLayer) byLayer.set(l, (byLayer.get(l) ?? 0) + n);
        }
        const group = name.endsWith("gateway") ? "gateway" : name === "dashboard" ? "dashboard" : "service";
        return { perRequest: cpuPerRequest(side, group), busy, byLayer };
      });
      const names = [...new Set(entries.flatMap((e) => [...e.layers.map((l) => l.name), NODE_ITSELF, GARBAGE_COLLECTION]))];
      console.log(`\n${title} (share of the process's profiled samples × its CPU per request):\n`);
      console.log(`| layer | ${entries.map((e) => e.name).join(" | ")} |\n|---|${entries.map(() => "---").join("|")}|`);
      for (const layer of names) {
        console.log(`| ${layer} | ${shares.map((s) => (s && s.busy > 0 ? ((s.perRequest * (s.byLayer.get(layer) ?? 0)) / s.busy).toFixed(0) : "—")).join(" | ")} |`);
      }
      console.log(`| all (CPU µs/request) | ${shares.map((s) => (s ? s.perRequest.toFixed(0) : "—")).join(" | ")} |`);
    };
    table("Gateway CPU by layer, µs per request", [
      { side: chain, name: "chain-gateway", layers: GATEWAY_LAYERS },
      { side: project, name: "gateway", layers: GATEWAY_LAYERS },
    ]);
    // The windows too, so the profiles can be read again (bench/lib/profileLayers.ts) with other layers.
    writeFileSync(join(profileDir, "windows.json"), JSON.stringify({ chain: chain.profileWindows, project: project.profileWindows }));
    console.log(`\n(profiles and the rounds' windows, in monotonic µs, kept in ${profileDir})`);
    table("Service CPU by layer, µs per request", [
      { side: chain, name: "chain-service", layers: SERVICE_LAYERS },
      { side: project, name: "meetings", layers: SERVICE_LAYERS },
      // Its share of a get: the request log's batches, stored as they arrive.
      { side: project, name: "dashboard", layers: SERVICE_LAYERS },
    ]);
  }
}

/**
 * How the list's slow requests (over 10 ms) lie in time: requests go out every 5 ms, so
 * a few moments that stall everything show as few 100 ms windows holding many of them.
 */
function slowText(report: LoadReport): string {
  const slow = slowRequests(report.latenciesMs, 10, 20);
  const driverPauses = report.driverPausesMs.reduce((sum, [start, end]) => sum + end - start, 0);
  const duringPauses = slowDuringPauses(report.latenciesMs, report.sentAtMs, report.driverPausesMs, 10);
  return (
    `over 10 ms: ${slow.count} requests in ${slow.windows} windows of 100 ms, ${duringPauses} of them in flight while the load driver collected its garbage ` +
    `(${report.driverPausesMs.length} collections, ${driverPauses.toFixed(0)} ms); ${report.late} sent over 5 ms late (at most ${ms(report.maxLagMs)} ms); ` +
    `some task of the machine waited for a core ${report.cpuPressure === undefined ? "(unknown)" : `${(report.cpuPressure * 100).toFixed(0)} %`} of the run`
  );
}

/** The CPU profile a process's main thread wrote into its folder (`CPU.<date>.<time>.<pid>.0.<n>.cpuprofile`), once it has. */
function profileOf(dir: string, name: string): string | undefined {
  try {
    const file = readdirSync(join(dir, name)).find((f) => /\.\d+\.0\.\d+\.cpuprofile$/.test(f));
    return file ? join(dir, name, file) : undefined;
  } catch {
    return undefined;
  }
}
