/**
 * npm run bench -- meetings
 *
 * One user with 100,000 meetings (90% organized, 10% attended; 90% confirmed,
 * the rest drafts and cancelled ones, spread over two years back and one
 * ahead), then through the gateway: the list and one meeting at a fixed
 * 200 requests/s; then 200 weekly series beside them (the upcoming list
 * and the day view); then creates at 200/s, at 500/s and flat out.
 */
import { DURATIONS, type MeetingStatus } from "@sched/proto";
import { uniqueSuffix } from "@sched/testing";
import { callApi, createUser, type ApiUser } from "./lib/api.js";
import { runLoad, statusText, type LoadReport, type LoadRequest } from "./lib/load.js";
import { insertMeetings, random, type SeedMeeting } from "./lib/seed.js";
import { ms, printTable } from "./lib/stats.js";
import { startBenchSystem, type BenchSystem, type WiringKind } from "./lib/system.js";

export interface BenchOptions {
  wirings: WiringKind[];
  /** Shorter runs, for trying the benchmark out. */
  quick: boolean;
}

export const MEETINGS = 100_000;
const QUARTER_MS = 15 * 60_000;
const DAY_MS = 24 * 60 * 60_000;

interface Row {
  wiring: WiringKind;
  scenario: string;
  target: string;
  rate: number;
  report: LoadReport;
}

/** The user's calendar: `count` meetings on quarter hours from two years back to one year ahead. */
export function calendar(user: ApiUser, count: number): SeedMeeting[] {
  const next = random(42);
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
  const from = Math.floor((Date.now() - 730 * DAY_MS) / QUARTER_MS) * QUARTER_MS;
  const quarters = (1_095 * DAY_MS) / QUARTER_MS;
  const guests = (n: number) => [...new Set(Array.from({ length: n }, () => `guest${Math.floor(next() * 500)}@example.com`))];
  return Array.from({ length: count }, (_, i) => {
    const start = from + Math.floor(next() * quarters) * QUARTER_MS;
    const roll = next();
    const status: MeetingStatus = roll < 0.9 ? "confirmed" : roll < 0.95 ? "draft" : "cancelled";
    const duration = pick(DURATIONS);
    if (i % 10 === 9) {
      const host = Math.floor(next() * 200);
      return { organizerId: `usr_benchhost${String(host).padStart(15, "0")}`, organizerEmail: `host${host}@example.com`, start, duration, participants: [user.email, ...guests(1)], status };
    }
    return { organizerId: user.userId, organizerEmail: user.email, start, duration, participants: guests(1 + Math.floor(next() * 3)), status };
  });
}

/** `count` create requests of single meetings in the year ahead, the same for the same `seed`. */
export function creates(count: number, seed = 7): LoadRequest[] {
  const next = random(seed);
  const base = Math.ceil(Date.now() / QUARTER_MS) * QUARTER_MS + DAY_MS;
  return Array.from({ length: count }, (_, i) => ({
    method: "POST",
    path: "/v1/meetings",
    body: JSON.stringify({
      title: `Bench meeting ${i}`,
      duration: "30 mins",
      startTime: new Date(base + Math.floor(next() * 365 * 96) * QUARTER_MS).toISOString().replace(".000Z", "Z"),
      participants: ["one@example.com", "two@example.com"],
    }),
  }));
}

export const SERIES = 200;

/** `count` weekly series in Europe/Berlin's wall clock, begun up to a year ago, two years long, on every weekday and working hour. */
export function weeklySeries(count: number): Record<string, unknown>[] {
  const next = random(11);
  return Array.from({ length: count }, (_, i) => {
    const start = new Date(Math.floor((Date.now() - next() * 365 * DAY_MS) / DAY_MS) * DAY_MS + (8 + (i % 9)) * 3_600_000);
    return {
      title: `Weekly ${i}`,
      duration: "30 mins",
      startTime: start.toISOString().replace(".000Z", "Z"),
      participants: ["one@example.com"],
      recurrence: "FREQ=WEEKLY;COUNT=104",
    };
  });
}

/** A date `days` ahead, as the day view takes it. */
export function dayAhead(days: number): string {
  return new Date(Date.now() + days * DAY_MS).toISOString().slice(0, 10);
}

async function runWiring(bench: BenchSystem, options: BenchOptions): Promise<Row[]> {
  const { url } = bench;
  const user = await createUser(url, bench.adminToken, { email: `bench-${uniqueSuffix()}@example.com`, name: "Bench", timezone: "UTC" });
  const seeded = performance.now();
  const ids = await insertMeetings(bench.database("meetings"), "test", calendar(user, MEETINGS));
  console.log(`[${bench.kind}] seeded ${ids.length.toLocaleString("en")} meetings in ${((performance.now() - seeded) / 1_000).toFixed(1)} s`);

  const page = await callApi(url, "GET", "/v1/meetings?limit=100", { token: user.key });
  const items = (page.body as { data?: unknown[] }).data?.length;
  if (page.status !== 200 || items !== 100) throw new Error(`the list answered ${page.status} with ${items} items`);

  const headers = { authorization: `Bearer ${user.key}` };
  const seconds = options.quick ? 5 : 20;
  const next = random(3);
  const rows: Row[] = [];
  const load = async (scenario: string, target: string, rate: number, count: number, concurrency: number, make: (i: number) => LoadRequest) => {
    // Warm-up at the same rate (JIT, pools, caches), not reported.
    await runLoad({ baseUrl: url, headers, ratePerSecond: rate, concurrency, requests: Array.from({ length: Math.min(400, count) }, (_, i) => make(i)) });
    const report = await runLoad({ baseUrl: url, headers, ratePerSecond: rate, concurrency, requests: Array.from({ length: count }, (_, i) => make(i)) }, bench.databaseThread);
    rows.push({ wiring: bench.kind, scenario, target, rate, report });
    console.log(`[${bench.kind}] ${scenario}: median ${ms(report.median)} ms, p99 ${ms(report.p99)} ms, ${report.throughput.toFixed(0)}/s (${statusText(report.statuses)})`);
  };

  await load("GET /healthz (HTTP floor, no bus)", "", 200, 200 * seconds, 8, () => ({ method: "GET", path: "/healthz" }));
  await load("GET /v1/meetings?limit=100", "median < 5, p99 < 20", 200, 200 * seconds, 8, () => ({ method: "GET", path: "/v1/meetings?limit=100" }));
  await load("GET /v1/meetings/:id", "median < 5, p99 < 20", 200, 200 * seconds, 8, () => ({ method: "GET", path: `/v1/meetings/${ids[Math.floor(next() * ids.length)]}` }));
  // Recurring meetings: 200 weekly series beside the single meetings, each expanded over the stretch a request needs.
  const seriesMade = performance.now();
  for (const body of weeklySeries(SERIES)) {
    const res = await callApi(url, "POST", "/v1/meetings", { token: user.key, body });
    if (res.status !== 201) throw new Error(`a series answered ${res.status}: ${JSON.stringify(res.body)}`);
  }
  console.log(`[${bench.kind}] created ${SERIES} weekly series in ${((performance.now() - seriesMade) / 1_000).toFixed(1)} s`);
  await load(`GET /v1/meetings?filter=upcoming&limit=100 (+${SERIES} weekly series)`, "median < 5", 200, 200 * seconds, 8, () => ({ method: "GET", path: "/v1/meetings?filter=upcoming&limit=100" }));
  await load(`GET /v1/availability?date=… (day view, +${SERIES} weekly series)`, "median < 5", 200, 200 * seconds, 8, (i) => ({ method: "GET", path: `/v1/availability?date=${dayAhead(i % 7)}` }));
  const createSeconds = options.quick ? 4 : 10;
  // Creates at the gets' and lists' rate too: a latency to set beside the other wiring's, where neither is near its ceiling.
  const lightBodies = creates(200 * seconds + 400, 11);
  await load("POST /v1/meetings at 200/s", "", 200, 200 * seconds, 8, (i) => lightBodies[i]!);
  const bodies = creates(500 * createSeconds + 400);
  await load("POST /v1/meetings at 500/s", "≥ 500/s", 500, 500 * createSeconds, 64, (i) => bodies[i]!);
  const flatOut = creates(options.quick ? 3_000 : 10_000);
  await load("POST /v1/meetings flat out (32 at a time)", "≥ 500/s", 5_000, flatOut.length, 32, (i) => flatOut[i]!);
  if (bench.databaseThread) console.log(`[${bench.kind}] the database's thread holds ${((await bench.databaseThread.threadHeapUsed()) / 2 ** 20).toFixed(1)} MB of JavaScript heap`);

  return rows;
}

export async function benchMeetings(options: BenchOptions): Promise<void> {
  const rows: Row[] = [];
  for (const kind of options.wirings) {
    const bench = await startBenchSystem(kind);
    try {
      rows.push(...(await runWiring(bench, options)));
    } finally {
      await bench.stop();
    }
  }
  printTable(
    "meetings through the gateway, 100,000 meetings for the user (ms; throughput = completed requests/s)",
    ["wiring", "scenario", "offered/s", "requests", "median", "p95", "p99", "max", "throughput", "late", "CPU ms/req", "main busy", "db thread busy", "statuses", "target"],
    rows.map(({ wiring, scenario, target, rate, report }) => [
      wiring,
      scenario,
      rate,
      report.count,
      ms(report.median),
      ms(report.p95),
      ms(report.p99),
      ms(report.max),
      report.throughput.toFixed(0),
      report.late,
      report.cpuMsPerRequest.toFixed(2),
      `${(report.mainThreadBusy * 100).toFixed(0)}%`,
      report.databaseThreadBusy === undefined ? "—" : `${(report.databaseThreadBusy * 100).toFixed(0)}%`,
      statusText(report.statuses),
      target,
    ]),
  );
}
