/**
 * npm run bench -- availability
 *
 * Recommended times (with and without optional people), free-busy for 50
 * people and the day view through the gateway. Every person has
 * meetings of 15 minutes to 2 hours anywhere in the 31-day horizon but
 * 12:00–14:00 UTC (busyPattern), 80% organized and 20% attended; the caller
 * (Europe/Berlin) trusts each participant, so all of them count. Then the
 * computation alone (availability-compute.ts), for the share of the service's
 * own work in the end-to-end figures.
 */
import { meetingsBusy } from "@sched/proto";
import { uniqueSuffix } from "@sched/testing";
import { benchComputation } from "./availability-compute.js";
import { addContact, callApi, createUser, type ApiUser } from "./lib/api.js";
import { busyPattern } from "./lib/busyPattern.js";
import { runLoad, statusText, type LoadReport, type LoadRequest } from "./lib/load.js";
import { insertMeetings, random, type SeedMeeting } from "./lib/seed.js";
import { measure, ms, printTable, summarize, type Summary } from "./lib/stats.js";
import { startBenchSystem, type BenchSystem, type WiringKind } from "./lib/system.js";
import type { BenchOptions } from "./meetings.js";

const DAY_MS = 24 * 60 * 60_000;
const HORIZON_DAYS = 31;
const ZONES = ["Europe/Berlin", "Europe/London", "America/New_York", "Asia/Kolkata", "Europe/Paris", "America/Sao_Paulo"];

interface Group {
  caller: ApiUser;
  participants: ApiUser[];
  meetingsEach: number;
}

/** The horizon: from the day after tomorrow (UTC date), 31 days. */
function horizon(): { firstDay: number; from: string; to: string } {
  const firstDay = Math.floor(Date.now() / DAY_MS) * DAY_MS + 2 * DAY_MS;
  const date = (t: number) => new Date(t).toISOString().slice(0, 10);
  return { firstDay, from: date(firstDay), to: date(firstDay + (HORIZON_DAYS - 1) * DAY_MS) };
}

/** A caller and `participants` people, each with `meetingsEach` meetings in the horizon; the caller trusts them all. */
async function seedGroup(bench: BenchSystem, label: string, participants: number, meetingsEach: number, seed: number): Promise<Group> {
  const { url, adminToken } = bench;
  const suffix = uniqueSuffix();
  const caller = await createUser(url, adminToken, { email: `caller-${label}-${suffix}@example.com`, name: "Caller", timezone: "Europe/Berlin" });
  const others: ApiUser[] = [];
  for (let i = 0; i < participants; i++) {
    const person = await createUser(url, adminToken, { email: `p${i}-${label}-${suffix}@example.com`, name: `P${i}`, timezone: ZONES[i % ZONES.length]! });
    await addContact(url, caller, person.email);
    others.push(person);
  }
  const next = random(seed);
  const { firstDay } = horizon();
  const rows: SeedMeeting[] = [];
  for (const person of [caller, ...others]) {
    busyPattern(next, meetingsEach, firstDay, HORIZON_DAYS).forEach((m, k) => {
      const attended = k % 5 === 4;
      rows.push({
        organizerId: attended ? `usr_benchhost${String(k % 100).padStart(15, "0")}` : person.userId,
        organizerEmail: attended ? `host${k % 100}@example.com` : person.email,
        start: m.start,
        duration: m.duration,
        participants: attended ? [person.email] : [`guest${k % 300}@example.com`],
        status: "confirmed",
      });
    });
  }
  await insertMeetings(bench.database("meetings"), "test", rows);
  return { caller, participants: others, meetingsEach };
}

function recommendRequest(group: Group, count: number, optional = 0): LoadRequest {
  const { from, to } = horizon();
  const emails = group.participants.map((p) => p.email);
  const body = { participants: emails.slice(0, count), ...(optional > 0 ? { optionalParticipants: emails.slice(count, count + optional) } : {}), duration: "30 mins", from, to };
  return { method: "POST", path: "/v1/availability/recommended", body: JSON.stringify(body) };
}

function freeBusyRequest(group: Group, count: number): LoadRequest {
  const { from, to } = horizon();
  return { method: "POST", path: "/v1/availability/free-busy", body: JSON.stringify({ participants: group.participants.slice(0, count).map((p) => p.email), from, to }) };
}

/** Fails the run unless free-busy shows every one of `count` people; returns how many intervals it gave. */
async function checkFreeBusy(bench: BenchSystem, group: Group, count: number): Promise<{ intervals: number; bytes: number }> {
  const r = freeBusyRequest(group, count);
  const res = await callApi(bench.url, r.method, r.path, { token: group.caller.key, body: JSON.parse(r.body!) });
  const body = res.body as { people?: Array<{ busy: unknown[] }> };
  if (res.status !== 200 || body.people?.length !== count) throw new Error(`free-busy answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
  return { intervals: body.people.reduce((n, p) => n + p.busy.length, 0), bytes: Buffer.byteLength(JSON.stringify(res.body)) };
}

/** Fails the run when the request does not do what it should (everyone counted, slots found). */
async function check(bench: BenchSystem, group: Group, count: number): Promise<number> {
  const r = recommendRequest(group, count);
  const res = await callApi(bench.url, r.method, r.path, { token: group.caller.key, body: JSON.parse(r.body!) });
  const body = res.body as { slots?: unknown[]; consideredParticipants?: unknown[]; emptyReason?: string };
  if (res.status !== 200 || body.consideredParticipants?.length !== count) throw new Error(`recommended answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
  return body.slots?.length ?? 0;
}

async function load(bench: BenchSystem, key: string, rate: number, count: number, concurrency: number, request: LoadRequest, warmup = Math.min(100, count)): Promise<LoadReport> {
  const plan = { baseUrl: bench.url, headers: { authorization: `Bearer ${key}` }, ratePerSecond: rate, concurrency };
  await runLoad({ ...plan, requests: Array.from({ length: warmup }, () => request) });
  return runLoad({ ...plan, requests: Array.from({ length: count }, () => request) });
}

interface HeadlineRow {
  wiring: WiringKind;
  scenario: string;
  rate: number;
  report: LoadReport | Summary;
  target: string;
}

async function runWiring(bench: BenchSystem, options: BenchOptions, growth: Array<Array<string | number>>): Promise<HeadlineRow[]> {
  const seconds = options.quick ? 5 : 20;
  const seeded = performance.now();
  // Cluster mode also answers the growth table: up to 50 participants, and other calendar sizes.
  const withGrowth = bench.kind === "cluster";
  // 50 people in both wirings: free-busy asks about all of them.
  const main = await seedGroup(bench, "main", 50, 2_000, 1);
  const bySize = new Map<number, Group>([[2_000, main]]);
  if (withGrowth) for (const [each, seed] of [[500, 2], [1_000, 3], [4_000, 4]] as const) bySize.set(each, await seedGroup(bench, `m${each}`, 10, each, seed));
  const total = [...bySize.values()].reduce((sum, g) => sum + (g.participants.length + 1) * g.meetingsEach, 0);
  console.log(`[${bench.kind}] seeded ${total.toLocaleString("en")} meetings for ${[...bySize.values()].reduce((n, g) => n + g.participants.length + 1, 0)} users in ${((performance.now() - seeded) / 1_000).toFixed(1)} s`);

  const rows: HeadlineRow[] = [];
  const slots = await check(bench, main, 10);
  const recommend = await load(bench, main.caller.key, 10, 10 * seconds, 4, recommendRequest(main, 10));
  rows.push({ wiring: bench.kind, scenario: `POST /v1/availability/recommended, 10 participants × 2,000 (${slots} slots)`, rate: 10, report: recommend, target: "median < 50" });
  console.log(`[${bench.kind}] recommended: median ${ms(recommend.median)} ms, p99 ${ms(recommend.p99)} ms (${statusText(recommend.statuses)})`);

  const withOptional = await load(bench, main.caller.key, 10, 10 * seconds, 4, recommendRequest(main, 10, 10));
  rows.push({ wiring: bench.kind, scenario: "POST /v1/availability/recommended, 10 required + 10 optional × 2,000", rate: 10, report: withOptional, target: "median < 60" });
  console.log(`[${bench.kind}] recommended with optional people: median ${ms(withOptional.median)} ms, p99 ${ms(withOptional.p99)} ms (${statusText(withOptional.statuses)})`);

  const answered = await checkFreeBusy(bench, main, 50);
  const freeBusy = await load(bench, main.caller.key, 10, 10 * seconds, 4, freeBusyRequest(main, 50));
  rows.push({
    wiring: bench.kind,
    scenario: `POST /v1/availability/free-busy, 50 people × 2,000 over 31 days (${answered.intervals.toLocaleString("en")} intervals, ${(answered.bytes / 1024).toFixed(0)} KiB)`,
    rate: 10,
    report: freeBusy,
    target: "median < 100",
  });
  console.log(`[${bench.kind}] free-busy: median ${ms(freeBusy.median)} ms, p99 ${ms(freeBusy.p99)} ms (${statusText(freeBusy.statuses)})`);

  const { firstDay } = horizon();
  const date = new Date(firstDay + DAY_MS).toISOString().slice(0, 10);
  const day = await load(bench, main.caller.key, 200, 200 * seconds, 8, { method: "GET", path: `/v1/availability?date=${date}` });
  rows.push({ wiring: bench.kind, scenario: "GET /v1/availability?date= (≈65 meetings that day)", rate: 200, report: day, target: "median < 5" });
  console.log(`[${bench.kind}] day view: median ${ms(day.median)} ms, p99 ${ms(day.p99)} ms (${statusText(day.statuses)})`);

  // The busy question alone, as availability asks it: 11 users over the horizon, on the bus.
  const users = [main.caller, ...main.participants.slice(0, 10)].map((u) => ({ userId: u.userId, email: u.email }));
  const span = { from: new Date(firstDay - DAY_MS).toISOString().replace(".000Z", "Z"), to: new Date(firstDay + (HORIZON_DAYS + 1) * DAY_MS).toISOString().replace(".000Z", "Z") };
  const busyReply = await bench.bus.request(meetingsBusy, { mode: "test", users, ...span });
  const bytes = Buffer.byteLength(JSON.stringify(busyReply));
  const intervals = busyReply.busy.reduce((n, b) => n + b.intervals.length, 0);
  const busy = await measure(() => bench.bus.request(meetingsBusy, { mode: "test", users, ...span }), options.quick ? 30 : 100);
  rows.push({ wiring: bench.kind, scenario: `${meetingsBusy.subject} alone, 11 users × 2,000 (${intervals.toLocaleString("en")} merged intervals, ${(bytes / 1024).toFixed(0)} KiB)`, rate: 0, report: busy, target: "" });

  if (withGrowth) {
    // Rounds over every size in turn, so that a burst of other work on the machine spreads over all of them.
    const rounds = options.quick ? 1 : 4;
    const sizes: Array<[Group, number]> = [...[1, 5, 10, 20, 50].map((count): [Group, number] => [main, count]), ...[500, 1_000, 4_000].map((each): [Group, number] => [bySize.get(each)!, 10])];
    const latencies = sizes.map(() => [] as number[]);
    const slotsFound = await Promise.all(sizes.map(([group, count]) => check(bench, group, count)));
    for (let round = 0; round < rounds; round++) {
      for (const [k, [group, count]] of sizes.entries()) {
        const r = await load(bench, group.caller.key, 10, 20, 1, recommendRequest(group, count), 3);
        latencies[k]!.push(...r.latenciesMs);
      }
    }
    sizes.forEach(([group, count], k) => {
      const s = summarize(latencies[k]!);
      growth.push([count, group.meetingsEach.toLocaleString("en"), ((count + 1) * group.meetingsEach).toLocaleString("en"), slotsFound[k]!, s.count, ms(s.median), ms(s.p95)]);
    });
  }
  return rows;
}

export async function benchAvailability(options: BenchOptions): Promise<void> {
  const rows: HeadlineRow[] = [];
  const growth: Array<Array<string | number>> = [];
  for (const kind of options.wirings) {
    const bench = await startBenchSystem(kind);
    try {
      rows.push(...(await runWiring(bench, options, growth)));
    } finally {
      await bench.stop();
    }
  }
  printTable(
    "availability through the gateway, 31-day horizon, 30-minute meeting (ms; rate 0 = one request at a time, straight on the bus)",
    ["wiring", "scenario", "offered/s", "requests", "median", "p95", "p99", "max", "statuses", "target"],
    rows.map(({ wiring, scenario, rate, report, target }) => [
      wiring,
      scenario,
      rate,
      report.count,
      ms(report.median),
      ms(report.p95),
      ms(report.p99),
      ms(report.max),
      "statuses" in report ? statusText(report.statuses) : "",
      target,
    ]),
  );
  if (growth.length > 0) {
    printTable(
      "how recommended times grow, cluster wiring, end to end, one request at a time at 10/s, sizes interleaved in rounds (ms)",
      ["participants", "meetings each", "meetings (with the caller's)", "slots", "requests", "median", "p95"],
      growth,
    );
  }
  await benchComputation();
}
