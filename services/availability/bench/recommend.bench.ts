/**
 * How fast the availability computations are, and how their cost grows.
 *
 *   node --conditions=@sched/source --import tsx services/availability/bench/recommend.bench.ts
 *
 * Prints median and p95 (milliseconds) of:
 * 1. recommendSlots over a 31-day horizon, for several numbers of counted
 *    people and meetings per person;
 * 2. dayView for one day with several numbers of meetings;
 * 3. the recommend handler through the in-process bus, with accounts, contacts
 *    and meetings answered from memory: the service's own cost per request
 *    (validation, JSON round trips, busy time of everyone), without a database.
 * Inputs are generated from a fixed seed, so runs are comparable.
 */
import { bind, MemoryBus } from "@sched/bus";
import { createLogger } from "@sched/logging";
import {
  SCOPES,
  WEEKDAYS,
  accountsLookupUsers,
  availabilityDay,
  availabilityRecommend,
  contactsVisibility,
  meetingsBusy,
  type Caller,
  type UserProfile,
  type WorkingHoursEntry,
} from "@sched/proto";
import { dayView } from "../src/domain/dayView.js";
import type { Interval } from "../src/domain/intervals.js";
import { recommendSlots, type CountedPerson } from "../src/domain/recommend.js";
import { availabilityService } from "../src/index.js";
import { serveAvailability } from "../src/service.js";

const MIN = 60_000;
const DAY = 24 * 60 * MIN;
const HORIZON_START = Date.parse("2026-03-02T00:00:00Z");
const HORIZON_DAYS = 31;
const ZONES = ["Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "Europe/London", "Asia/Tokyo", "America/Los_Angeles", "Europe/Paris", "Asia/Kathmandu", "America/Sao_Paulo"];
const LONG_DAYS: WorkingHoursEntry[] = WEEKDAYS.map((day) => ({ day, start: "07:00", end: "20:00" }));
const OFFICE_DAYS: WorkingHoursEntry[] = WEEKDAYS.slice(0, 5).map((day) => ({ day, start: "09:00", end: "17:00" }));

function random(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
}

/** `count` meetings of 15–60 minutes on the quarter hours of [start, start + days). */
function meetings(count: number, start: number, days: number, next: () => number): Interval[] {
  return Array.from({ length: count }, () => {
    const s = start + Math.floor(next() * days * 96) * 15 * MIN;
    return { start: s, end: s + (1 + Math.floor(next() * 4)) * 15 * MIN };
  });
}

function people(count: number, meetingsEach: number): CountedPerson[] {
  const next = random(7);
  return Array.from({ length: count }, (_, k) => ({
    userId: `usr_${k}`,
    zone: ZONES[k % ZONES.length]!,
    workingHours: LONG_DAYS,
    busy: meetings(meetingsEach, HORIZON_START, HORIZON_DAYS, next),
    isCaller: k === 0,
  }));
}

async function measure(run: () => unknown, runs: number): Promise<{ median: number; p95: number }> {
  for (let k = 0; k < Math.min(10, runs); k++) await run();
  const times: number[] = [];
  for (let k = 0; k < runs; k++) {
    const t0 = performance.now();
    await run();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(runs / 2)]!, p95: times[Math.min(runs - 1, Math.ceil(runs * 0.95) - 1)]! };
}

const ms = (n: number) => n.toFixed(2).padStart(8);

function table(title: string, header: string[], rows: Array<Array<string | number>>): void {
  console.log(`\n${title}`);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells: Array<string | number>) => cells.map((c, i) => String(c).padStart(widths[i]!)).join("  ");
  console.log(line(header));
  for (const r of rows) console.log(line(r));
}

async function benchRecommend(): Promise<void> {
  const sizes: Array<[number, number]> = [
    [1, 2000],
    [2, 2000],
    [5, 2000],
    [10, 100],
    [10, 200],
    [10, 500],
    [10, 1000],
    [10, 2000],
    [10, 4000],
    [20, 2000],
    [50, 2000],
  ];
  const rows: Array<Array<string | number>> = [];
  for (const [count, each] of sizes) {
    const input = {
      now: HORIZON_START,
      zone: ZONES[0]!,
      horizon: { start: HORIZON_START, end: HORIZON_START + HORIZON_DAYS * DAY },
      timeRange: "any" as const,
      durationMs: 30 * MIN,
      people: people(count, each),
      limit: 10,
    };
    const slots = recommendSlots(input).slots.length;
    const { median, p95 } = await measure(() => recommendSlots(input), 50);
    rows.push([count, each, count * each, slots, ms(median), ms(p95)]);
  }
  table("recommendSlots, 31-day horizon, 30-minute meeting, limit 10 (ms)", ["people", "meetings each", "meetings", "slots", "median", "p95"], rows);
}

async function benchDayView(): Promise<void> {
  const rows: Array<Array<string | number>> = [];
  const day = Date.parse("2026-03-02T00:00:00Z"); // a Monday
  for (const count of [0, 10, 100, 1000]) {
    const busy = meetings(count, day, 1, random(11));
    const input = { localDate: "2026-03-02", zone: "Europe/Berlin", workingHours: OFFICE_DAYS, busy };
    const slots = dayView(input).slots.length;
    const { median, p95 } = await measure(() => dayView(input), 200);
    rows.push([count, slots, ms(median), ms(p95)]);
  }
  table("dayView, one day, 09:00–17:00 (ms)", ["meetings that day", "slots", "median", "p95"], rows);
}

/** The handlers over the in-process bus; siblings answer from memory. */
async function benchHandlers(): Promise<void> {
  const logger = createLogger({ name: "availability-bench", level: "silent" });
  const rows: Array<Array<string | number>> = [];
  for (const [count, each] of [
    [2, 2000],
    [10, 500],
    [10, 2000],
  ] as Array<[number, number]>) {
    const bus = new MemoryBus(logger);
    const crowd = people(count, each);
    const profiles: UserProfile[] = crowd.map((p) => ({ id: p.userId, email: `${p.userId}@example.com`, name: p.userId, timezone: p.zone, workingHours: [...p.workingHours] }));
    const stamp = (t: number) => new Date(t).toISOString().replace(".000Z", "Z");
    // Formatted once: the cost measured is the availability service's and the bus's, not a stand-in's.
    const busyById = new Map(
      crowd.map((p) => [p.userId, [...p.busy].sort((a, b) => a.start - b.start).map((b) => ({ ...b, stamped: { start: stamp(b.start), end: stamp(b.end) } }))]),
    );
    await bus.serve({ name: "siblings", version: "0.0.0" }, [
      bind(accountsLookupUsers, async ({ ids, emails }) => ({
        users: profiles.filter((u) => (ids ?? []).includes(u.id) || (emails ?? []).includes(u.email)),
      })),
      bind(contactsVisibility, async ({ others }) => ({ visibleUserIds: others.map((o) => o.userId) })),
      bind(meetingsBusy, async ({ users, from, to }) => {
        const [f, t] = [Date.parse(from), Date.parse(to)];
        return {
          busy: users.map((u) => ({
            userId: u.userId,
            intervals: (busyById.get(u.userId) ?? []).filter((b) => b.end > f && b.start < t).map((b) => b.stamped),
          })),
        };
      }),
    ]);
    const clock = () => HORIZON_START;
    await serveAvailability({ bus, logger, config: availabilityService.config.parse({}) }, clock);
    const caller: Caller = { userId: profiles[0]!.id, email: profiles[0]!.email, timezone: profiles[0]!.timezone, mode: "test", scopes: [...SCOPES], apiKeyId: "key_bench" };
    const recommend = () =>
      bus.request(
        availabilityRecommend,
        { params: {}, query: {}, body: { participants: profiles.slice(1).map((p) => p.email), duration: "30 mins", from: "2026-03-02", to: "2026-04-01" } },
        { caller },
      );
    const day = () => bus.request(availabilityDay, { params: {}, query: { date: "2026-03-02" }, body: undefined }, { caller });
    const r = await measure(recommend, 30);
    const d = await measure(day, 100);
    rows.push([count, each, ms(r.median), ms(r.p95), ms(d.median), ms(d.p95)]);
    await bus.close();
  }
  table(
    "handlers through the in-process bus, siblings answering from memory (ms)",
    ["people", "meetings each", "recommend median", "recommend p95", "day median", "day p95"],
    rows,
  );
}

await benchRecommend();
await benchDayView();
await benchHandlers();
