/**
 * npm run bench -- standalone-upcoming [--quick]
 *
 * Where the upcoming list's time goes with 200 weekly series on PGlite
 * (standalone mode's database): the meetings service alone on an in-process
 * bus, a user with 10,000 single meetings and 200 weekly series, CPU per
 * list request (this process: PGlite runs in it) and per part of it, each
 * run on its own as the handler runs it: the list's one statement, its
 * series-versions subquery alone, the page of single meetings alone, the
 * series store's answer, the occurrences' expansion, the merge. Two passes,
 * after a warm-up each; wall time beside CPU, which the load of the machine
 * stretches.
 */
import { MemoryBus } from "@sched/bus";
import { openSchema } from "@sched/db";
import { newId } from "@sched/ids";
import { createLogger } from "@sched/logging";
import { meetingsCreate, meetingsList, SCOPES, type Caller } from "@sched/proto";
import { startModule } from "@sched/runtime";
import { loadavg } from "node:os";
import { calendarPageSql, listCalendar, seriesVersionsSql } from "../services/meetings/src/db/queries.js";
import { SeriesStore } from "../services/meetings/src/db/seriesStore.js";
import { planList } from "../services/meetings/src/domain/filters.js";
import { mergePage, occurrencesForPage, singleEntries } from "../services/meetings/src/domain/occurrencePage.js";
import { meetingsService } from "../services/meetings/src/index.js";
import { insertMeetings } from "./lib/seed.js";
import { calendar, SERIES, weeklySeries, type BenchOptions } from "./meetings.js";

const SINGLES = 10_000;

export async function benchStandaloneUpcoming(options: BenchOptions): Promise<void> {
  const rounds = options.quick ? 300 : 1_000;
  const logger = createLogger({ name: "bench", level: "silent" });
  const db = await openSchema({ kind: "pglite" }, meetingsService.schema, meetingsService.migrations);
  const bus = new MemoryBus(logger);
  const service = await startModule(meetingsService, { database: { migrated: db }, bus, logger, settings: {} });
  try {
    const caller: Caller = { userId: newId("usr"), email: "bench@example.com", timezone: "UTC", mode: "test", scopes: [...SCOPES], apiKeyId: newId("key") };
    await insertMeetings(db, "test", calendar({ userId: caller.userId, email: caller.email, key: "" }, SINGLES));
    for (const body of weeklySeries(SERIES)) {
      const reply = (await bus.request(meetingsCreate, { params: {}, query: {}, body } as never, { caller, headers: {} })) as { status: number };
      if (reply.status !== 201) throw new Error(`a series answered ${reply.status}`);
    }
    const list = () => bus.request(meetingsList, { params: {}, query: { filter: "upcoming", limit: "100" } } as never, { caller, headers: {} });

    // The handler's steps, with the inputs it gives them (inbound/listMeetings.ts).
    const whose = { mode: caller.mode, userId: caller.userId, email: caller.email };
    const plan = planList("upcoming", new Date());
    const beside = seriesVersionsSql({ mode: caller.mode, users: [whose], from: plan.endAfter ?? plan.startAfter, to: plan.startBefore ?? plan.startAtOrBefore });
    const query = { ...whose, plan, limit: 100, itemBytes: undefined };
    const page = calendarPageSql(query);
    const store = new SeriesStore();
    const singles = await listCalendar(db, query, beside);
    const kept = await store.readNamed(db, caller.mode, singles.beside);
    const entries = singleEntries(singles.itemsJson);
    const bound = singles.hasMore ? new Date(entries[entries.length - 1]!.at) : undefined;
    const expand = () => occurrencesForPage({ plan, series: kept.map((k) => k.series), viewer: whose, after: undefined, bound, wanted: 101, exceptionsOf: async () => kept.flatMap((k) => k.exceptions) });
    const occurrences = await expand();
    const merge = async () =>
      mergePage({ direction: plan.direction, singles: singleEntries(singles.itemsJson), singlesHaveMore: singles.hasMore, occurrences: occurrences.items, occurrencesExhausted: occurrences.exhausted, limit: 100, itemBytes: undefined });
    console.log(`${kept.length} series, ${entries.length} single meetings and ${occurrences.items.length} occurrences to merge; ${rounds} calls per figure`);

    const measure = async (name: string, fn: () => Promise<unknown>) => {
      for (let i = 0; i < 50; i++) await fn();
      const cpu = process.cpuUsage();
      const wall = performance.now();
      for (let i = 0; i < rounds; i++) await fn();
      const used = process.cpuUsage(cpu);
      console.log(`  ${name.padEnd(52)} CPU ${((used.user + used.system) / rounds / 1_000).toFixed(2)} ms, wall ${((performance.now() - wall) / rounds).toFixed(2)} ms per call`);
    };
    for (let pass = 1; pass <= 2; pass++) {
      console.log(`pass ${pass}, load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
      await measure("list request (bus, handler, reply decoded)", list);
      await measure("the list's statement (page + series versions)", () => listCalendar(db, query, beside));
      await measure("series versions subquery alone", () => db.raw(`select ${beside.sql} as v`, beside.bindings as never));
      await measure("page of single meetings alone", () => db.raw(page.sql, page.bindings as never));
      await measure("series store (all kept)", () => store.readNamed(db, caller.mode, singles.beside));
      await measure("occurrences expansion (occurrencesForPage)", expand);
      await measure("merge (mergePage)", merge);
      await measure("select 1 (PGlite's floor)", () => db.raw("select 1"));
    }
  } finally {
    await service.stop();
    await bus.close();
    await db.destroy();
  }
}
