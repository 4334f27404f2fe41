/**
 * npm run bench -- recurring [--wiring=cluster|processes[,…]] [--quick] [--profile]
 *
 * The recurring part of the meetings benchmark on its own, with what holds on
 * a busy machine beside the wall-clock figures: one user with 100,000 single
 * meetings (as `meetings` seeds them), the upcoming list before any series,
 * then 200 weekly series and the upcoming list and the day view at 200
 * requests/s. For each scenario: the SQL statements per request of the
 * meetings and availability services (cluster wiring: counted on their own
 * connection pools) and, in the processes wiring, each process's CPU time per
 * request (Postgres's connections to the run's database counted together).
 * With --profile the busy CPU samples of each measured round are given by
 * layer: in the processes wiring meetings' and availability's (run under
 * `--cpu-prof`), in the cluster wiring those of this process's main thread
 * (the gateway and every service; the load runs in a worker), profiled
 * through the inspector for the round alone.
 */
import type { Knex } from "@sched/db";
import { uniqueSuffix } from "@sched/testing";
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { callApi, createUser } from "./lib/api.js";
import { cpuSnapshot, cpuUsed, type CpuGroup } from "./lib/cpuTime.js";
import { runLoad, statusText, type LoadReport, type LoadRequest } from "./lib/load.js";
import { GARBAGE_COLLECTION, layerShares, NODE_ITSELF, type Layer } from "./lib/profileLayers.js";
import { insertMeetings } from "./lib/seed.js";
import { ms, printTable } from "./lib/stats.js";
import { startBenchSystem, type BenchSystem, type WiringKind } from "./lib/system.js";
import { calendar, dayAhead, MEETINGS, SERIES, weeklySeries, type BenchOptions } from "./meetings.js";

/** The services whose statements and profiles are read. */
const WATCHED = ["meetings", "availability"] as const;
/** The processes run under `--cpu-prof` with --profile in the processes wiring: the gateway carries every reply. */
const PROFILED = [...WATCHED, "gateway"] as const;

/** Where a recurring request's CPU goes in meetings and availability, leaf first. */
const RECURRING_LAYERS: Layer[] = [
  { name: "rule expansion (rrule-temporal)", claims: /rrule-temporal|temporal-polyfill/ },
  { name: "zones and dates (luxon)", claims: /node_modules\/luxon\// },
  { name: "logging/metrics", claims: /@opentelemetry|libs\/telemetry\/|\/pino\// },
  { name: "validation (zod)", claims: /node_modules\/zod\// },
  { name: "SQL client (knex, pg)", claims: /node_modules\/knex\/|node_modules\/pg|libs\/db\// },
  { name: "series and occurrences (meetings domain)", claims: /meetings\/src\/domain\/(series|recurrence|occurrencePage|busyOccurrences)/ },
  { name: "service code", claims: /services\/[a-z-]+\/src\/|proto\/src\/|libs\/(ids|errors|time)\// },
  { name: "bus (NATS, dispatch)", claims: /@nats-io|libs\/bus\// },
];

interface Row {
  wiring: WiringKind;
  scenario: string;
  rate: number;
  report: LoadReport;
  statements: Map<string, number>;
  cpu: Map<string, number>;
  window: [number, number];
  /** The round's profile of this process's main thread (cluster wiring with --profile). */
  profile?: string;
}

/** Counts the statements each watched service's pool sends (cluster wiring: the pools are in this process). */
function countStatements(bench: BenchSystem): { take(): Map<string, number> } {
  const counts = new Map<string, number>(WATCHED.map((s) => [s, 0]));
  if (bench.kind === "cluster") {
    for (const service of WATCHED) bench.database(service).on("query", () => counts.set(service, counts.get(service)! + 1));
  }
  return {
    take: () => {
      const out = new Map(counts);
      for (const s of WATCHED) counts.set(s, 0);
      return out;
    },
  };
}

/** Each process of the processes wiring, and Postgres's connections to the run's database. */
function cpuGroups(bench: BenchSystem, db: Knex): CpuGroup[] {
  if (!bench.pids) return [];
  const groups: CpuGroup[] = [...bench.pids].map(([name, pid]) => ({ name, pids: () => [pid] }));
  groups.push({
    name: "postgres",
    pids: async () => {
      const { rows } = (await db.raw("select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()")) as { rows: { pid: number }[] };
      return rows.map((r) => r.pid);
    },
  });
  return groups;
}

const monotonicUs = () => Number(process.hrtime.bigint() / 1_000n);

async function runWiring(bench: BenchSystem, options: BenchOptions & { profile: boolean }): Promise<Row[]> {
  const { url } = bench;
  const user = await createUser(url, bench.adminToken, { email: `bench-${uniqueSuffix()}@example.com`, name: "Bench", timezone: "UTC" });
  await insertMeetings(bench.database("meetings"), "test", calendar(user, MEETINGS));
  const headers = { authorization: `Bearer ${user.key}` };
  // Quick runs go at half the rate: on a busy machine statements and CPU per request are read without a queue of 503s.
  const rate = options.quick ? 100 : 200;
  const count = options.quick ? 500 : 4_000;
  const statements = countStatements(bench);
  const groups = cpuGroups(bench, bench.database("meetings"));
  const rows: Row[] = [];
  const inspector = options.profile && bench.kind === "cluster" ? new Session() : undefined;
  inspector?.connect();
  await inspector?.post("Profiler.enable");
  await inspector?.post("Profiler.setSamplingInterval", { interval: 200 });
  const load = async (scenario: string, make: (i: number) => LoadRequest) => {
    await runLoad({ baseUrl: url, headers, ratePerSecond: rate, concurrency: 8, requests: Array.from({ length: 400 }, (_, i) => make(i)) });
    statements.take();
    const before = await cpuSnapshot(groups);
    if (inspector) await inspector.post("Profiler.start");
    const from = monotonicUs();
    const report = await runLoad({ baseUrl: url, headers, ratePerSecond: rate, concurrency: 8, requests: Array.from({ length: count }, (_, i) => make(i)) });
    const window: [number, number] = [from, monotonicUs()];
    const cpu = cpuUsed(before, await cpuSnapshot(groups));
    let profile: string | undefined;
    if (inspector) {
      profile = join(mkdtempSync(join(tmpdir(), "recurring-profile-")), "main.cpuprofile");
      writeFileSync(profile, JSON.stringify((await inspector.post("Profiler.stop")).profile));
    }
    rows.push({ wiring: bench.kind, scenario, rate, report, statements: statements.take(), cpu, window, ...(profile ? { profile } : {}) });
    console.log(`[${bench.kind}] ${scenario}: median ${ms(report.median)} ms, p99 ${ms(report.p99)} ms (${statusText(report.statuses)})`);
  };

  const upcoming = () => ({ method: "GET", path: "/v1/meetings?filter=upcoming&limit=100" });
  await load("GET /v1/meetings?filter=upcoming&limit=100 (no series)", upcoming);
  for (const body of weeklySeries(SERIES)) {
    const res = await callApi(url, "POST", "/v1/meetings", { token: user.key, body });
    if (res.status !== 201) throw new Error(`a series answered ${res.status}: ${JSON.stringify(res.body)}`);
  }
  await load(`GET /v1/meetings?filter=upcoming&limit=100 (+${SERIES} weekly series)`, upcoming);
  await load(`GET /v1/availability?date=… (day view, +${SERIES} weekly series)`, (i) => ({ method: "GET", path: `/v1/availability?date=${dayAhead(i % 7)}` }));
  inspector?.disconnect();
  return rows;
}

function printShares(title: string, files: string[], rows: Row[]): void {
  const shares = rows.map((r, i) => layerShares(files[i]!, RECURRING_LAYERS, r.profile ? 0 : r.window[0], r.profile ? Infinity : r.window[1]));
  const names = [...RECURRING_LAYERS.map((l) => l.name), GARBAGE_COLLECTION, NODE_ITSELF];
  printTable(
    title,
    ["layer", ...rows.map((r) => r.scenario.replace(/^GET /, ""))],
    [
      ["busy samples", ...shares.map((s) => s.busySamples)],
      ...names.map((name) => [name, ...shares.map((s) => `${(((s.byLayer.get(name) ?? 0) / Math.max(1, s.busySamples)) * 100).toFixed(1)}%`)]),
    ],
  );
}

function printProfiles(dir: string | undefined, rows: Row[]): void {
  if (rows.every((r) => r.profile)) {
    printShares("the main thread (gateway and every service): share of busy CPU samples by layer within each measured round", rows.map((r) => r.profile!), rows);
    return;
  }
  if (!dir) return;
  for (const service of PROFILED) {
    const files = readdirSync(join(dir, service)).filter((f) => f.endsWith(".cpuprofile"));
    if (files.length === 0) continue;
    const file = join(dir, service, files[0]!);
    printShares(`${service}: share of busy CPU samples by layer within each measured round (profile ${file})`, rows.map(() => file), rows);
  }
}

export async function benchRecurring(options: BenchOptions & { profile: boolean }): Promise<void> {
  const wirings = options.wirings.filter((w) => w !== "standalone");
  if (wirings.length === 0) throw new Error("the recurring benchmark runs in the cluster and processes wirings");
  let profileDir: string | undefined;
  for (const kind of wirings) {
    const profiled = options.profile && kind === "processes";
    if (profiled) profileDir = mkdtempSync(join(tmpdir(), "recurring-profiles-"));
    const nodeArgs = profiled ? Object.fromEntries(PROFILED.map((s) => [s, ["--cpu-prof", `--cpu-prof-dir=${join(profileDir!, s)}`]])) : {};
    const bench = await startBenchSystem(kind, { nodeArgs });
    let rows: Row[];
    try {
      rows = await runWiring(bench, options);
    } finally {
      // A graceful stop (SIGTERM) writes the profiles.
      await bench.stop();
    }
    printRows(rows);
    if (options.profile) printProfiles(profiled ? profileDir : undefined, rows);
  }
}

function printRows(rows: Row[]): void {
  const processNames = [...new Set(rows.flatMap((r) => [...r.cpu.keys()]))];
  printTable(
    "recurring meetings through the gateway, 100,000 single meetings for the user (ms; statements and CPU per request)",
    ["wiring", "scenario", "offered/s", "requests", "median", "p95", "p99", "statuses", "bench CPU ms/req", "meetings stmts/req", "availability stmts/req", ...processNames.map((n) => `${n} CPU ms/req`)],
    rows.map(({ wiring, scenario, rate, report, statements, cpu }) => [
      wiring,
      scenario,
      rate,
      report.count,
      ms(report.median),
      ms(report.p95),
      ms(report.p99),
      statusText(report.statuses),
      report.cpuMsPerRequest.toFixed(2),
      wiring === "cluster" ? (statements.get("meetings")! / report.count).toFixed(2) : "-",
      wiring === "cluster" ? (statements.get("availability")! / report.count).toFixed(2) : "-",
      ...processNames.map((n) => (cpu.has(n) ? (cpu.get(n)! / 1_000 / report.count).toFixed(2) : "-")),
    ]),
  );
}
