/**
 * The availability service's own cost, without a database or a network:
 * 1. recommendSlots over a 31-day horizon for several numbers of counted
 *    people and meetings per person (the slot computation itself);
 * 2. dayView for one day with several numbers of meetings;
 * 3. the recommend and day handlers through the in-process bus, with
 *    accounts, contacts and meetings answered from memory: validation, JSON
 *    round trips and the busy reply's decoding on top of the computation.
 * Inputs come from fixed seeds, so runs are comparable.
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
  type BusyInterval,
  type Caller,
  type UserProfile,
  type WorkingHoursEntry,
  NO_PREFERENCES,
} from "@sched/proto";
import { dayView } from "../services/availability/src/domain/dayView.js";
import { merge, type Interval } from "../services/availability/src/domain/intervals.js";
import { recommendSlots, type CountedPerson } from "../services/availability/src/domain/recommend.js";
import { availabilityService } from "../services/availability/src/index.js";
import { serveAvailability } from "../services/availability/src/service.js";
import { busyPattern } from "./lib/busyPattern.js";
import { DURATION_MINUTES, random } from "./lib/seed.js";
import { measure, ms, printTable } from "./lib/stats.js";

const MIN = 60_000;
const DAY = 24 * 60 * MIN;
const HORIZON_START = Date.parse("2026-03-02T00:00:00Z");
const HORIZON_DAYS = 31;
const ZONES = ["Europe/Berlin", "Europe/London", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "Europe/Paris", "Asia/Tokyo", "America/Los_Angeles", "Asia/Kathmandu", "America/Sao_Paulo"];
const OFFICE_DAYS: WorkingHoursEntry[] = WEEKDAYS.slice(0, 5).map((day) => ({ day, start: "09:00", end: "17:00" }));

function busyOf(count: number, next: () => number): Interval[] {
  return busyPattern(next, count, HORIZON_START, HORIZON_DAYS).map((m) => ({ start: m.start, end: m.start + DURATION_MINUTES[m.duration] * MIN }));
}

/** `count` people (the first is the caller) with `meetingsEach` meetings in the horizon. */
function people(count: number, meetingsEach: number): CountedPerson[] {
  const next = random(7);
  return Array.from({ length: count }, (_, k) => ({
    userId: `usr_${k}`,
    zone: ZONES[k % ZONES.length]!,
    workingHours: OFFICE_DAYS,
    busy: busyOf(meetingsEach, next),
    isCaller: k === 0,
  }));
}

const recommendInput = (crowd: CountedPerson[]) => ({
  now: HORIZON_START,
  zone: ZONES[0]!,
  horizon: { start: HORIZON_START, end: HORIZON_START + HORIZON_DAYS * DAY },
  timeRange: "any" as const,
  durationMs: 30 * MIN,
  people: crowd,
  limit: 10,
});

/** people × meetings each, the caller counted among the people. */
const COMPUTE_SIZES: Array<[number, number]> = [
  [2, 2_000],
  [6, 2_000],
  [11, 500],
  [11, 1_000],
  [11, 2_000],
  [11, 4_000],
  [21, 2_000],
  [51, 2_000],
  [101, 2_000],
];

async function benchRecommend(): Promise<void> {
  const rows: Array<Array<string | number>> = [];
  for (const [count, each] of COMPUTE_SIZES) {
    const input = recommendInput(people(count, each));
    const slots = recommendSlots(input).slots.length;
    const s = await measure(() => recommendSlots(input), 50);
    rows.push([count, each.toLocaleString("en"), (count * each).toLocaleString("en"), slots, ms(s.median), ms(s.p95)]);
  }
  printTable("recommendSlots alone: 31-day horizon, 30-minute meeting, limit 10 (ms)", ["people", "meetings each", "meetings", "slots", "median", "p95"], rows);
}

async function benchDayView(): Promise<void> {
  const rows: Array<Array<string | number>> = [];
  for (const count of [0, 10, 65, 250, 1_000]) {
    const busy = busyOf(count, random(11)).map((b) => ({ start: HORIZON_START + ((b.start - HORIZON_START) % DAY), end: HORIZON_START + ((b.start - HORIZON_START) % DAY) + (b.end - b.start) }));
    const input = { localDate: "2026-03-02", zone: "Europe/Berlin", workingHours: OFFICE_DAYS, busy };
    const slots = dayView(input).slots.length;
    const s = await measure(() => dayView(input), 200);
    rows.push([count, slots, ms(s.median), ms(s.p95)]);
  }
  printTable("dayView alone: one Monday, 09:00–17:00 Europe/Berlin (ms)", ["meetings that day", "slots", "median", "p95"], rows);
}

/** The handlers over the in-process bus; the siblings answer from memory, with busy time already merged as meetings sends it. */
async function benchHandlers(): Promise<void> {
  const logger = createLogger({ name: "availability-bench", level: "silent" });
  const rows: Array<Array<string | number>> = [];
  for (const [count, each] of [
    [2, 2_000],
    [11, 500],
    [11, 2_000],
    [101, 2_000],
  ] as Array<[number, number]>) {
    const bus = new MemoryBus(logger);
    const crowd = people(count, each);
    const profiles: UserProfile[] = crowd.map((p) => ({ id: p.userId, email: `${p.userId}@example.com`, name: p.userId, timezone: p.zone, workingHours: [...p.workingHours], preferences: NO_PREFERENCES }));
    const busyById = new Map(crowd.map((p) => [p.userId, merge(p.busy).map((b): BusyInterval => [b.start / 1_000, b.end / 1_000])]));
    await bus.serve({ name: "siblings", version: "0.0.0" }, [
      bind(accountsLookupUsers, async ({ ids, emails }) => ({
        users: profiles.filter((u) => (ids ?? []).includes(u.id) || (emails ?? []).includes(u.email)),
      })),
      bind(contactsVisibility, async ({ others }) => ({ visibleUserIds: others.map((o) => o.userId) })),
      bind(meetingsBusy, async ({ users, from, to }) => {
        const [f, t] = [Date.parse(from) / 1_000, Date.parse(to) / 1_000];
        return { busy: users.map((u) => ({ userId: u.userId, intervals: (busyById.get(u.userId) ?? []).filter(([s, e]) => e > f && s < t) })) };
      }),
    ]);
    await serveAvailability({ bus, logger, config: availabilityService.config.parse({}) }, () => HORIZON_START);
    const caller: Caller = { userId: profiles[0]!.id, email: profiles[0]!.email, timezone: profiles[0]!.timezone, mode: "test", scopes: [...SCOPES], apiKeyId: "key_bench" };
    const recommend = () =>
      bus.request(
        availabilityRecommend,
        { params: {}, query: {}, body: { participants: profiles.slice(1).map((p) => p.email), duration: "30 mins", from: "2026-03-02", to: "2026-04-01" } },
        { caller },
      );
    const day = () => bus.request(availabilityDay, { params: {}, query: { date: "2026-03-03" }, body: undefined }, { caller });
    const r = await measure(recommend, 30);
    const d = await measure(day, 100);
    rows.push([count, each.toLocaleString("en"), ms(r.median), ms(r.p95), ms(d.median), ms(d.p95)]);
    await bus.close();
  }
  printTable(
    "availability handlers through the in-process bus, siblings answering from memory (ms)",
    ["people", "meetings each", "recommend median", "recommend p95", "day median", "day p95"],
    rows,
  );
}

export async function benchComputation(): Promise<void> {
  await benchRecommend();
  await benchDayView();
  await benchHandlers();
}
