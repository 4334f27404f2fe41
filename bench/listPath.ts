/**
 * What `GET /v1/meetings?limit=100` costs the meetings service and its
 * Postgres, layer by layer, in one process against the local Postgres:
 *
 * - the whole handler as the gateway reaches it (the bus's `forward`, the
 *   reply's body kept as the service's bytes), in an in-process bus;
 * - the page's statement alone, as the service runs it;
 * - the same statement on a bare pg client (the driver's floor);
 * - Postgres's own CPU for each (its backends of this database, from /proc).
 *
 * With `--bus=nats` the service serves on the local NATS and the handler is
 * reached through a second connection, as the gateway reaches it: the node
 * figure of "handler" is then the service's and the gateway's bus side
 * together (nats-server's own CPU is not counted: the server is shared).
 *
 * One organizer with `--meetings` (500) confirmed upcoming meetings of one
 * participant each, the page of 100 (the side-by-side benchmark's data).
 * Node's CPU per request from process.cpuUsage, the median of the rounds.
 *
 *   node --conditions=@sched/source --import tsx bench/listPath.ts [--rounds=7] [--requests=1000] [--meetings=500] [--bus=nats]
 */
import { connectNatsBus, MemoryBus, type Bus } from "@sched/bus";
import { openSchema, type Knex } from "@sched/db";
import { createLogger } from "@sched/logging";
import { startModule } from "@sched/runtime";
import { meetingsCreate, meetingsList, type Caller, type HttpReply, type JsonText } from "@sched/proto";
import { createTestDatabase, deleteNamespaceStreams, NATS_URL, uniqueSuffix } from "@sched/testing";
import { loadavg } from "node:os";
import pg from "pg";
import { meetingsService } from "../services/meetings/src/index.js";
import { calendarPageBesideSql, listCalendar, seriesVersionsSql } from "../services/meetings/src/db/queries.js";
import { planList } from "../services/meetings/src/domain/filters.js";
import { processCpuUs } from "./lib/cpuTime.js";

const arg = (name: string, fallback: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback);
const ROUNDS = arg("rounds", 7);
const REQUESTS = arg("requests", 1_000);
const MEETINGS = arg("meetings", 500);
const logger = createLogger({ name: "list-path", level: "silent" });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const load = () => loadavg().map((l) => l.toFixed(1)).join(" ");

const database = await createTestDatabase();
const db = await openSchema({ kind: "postgres", url: database.url }, meetingsService.schema, meetingsService.migrations);
const overNats = process.argv.includes("--bus=nats");
const namespace = `bench_list_${uniqueSuffix()}`;
const serving: Bus = overNats ? await connectNatsBus({ servers: NATS_URL, namespace, name: "list-path-meetings", logger }) : new MemoryBus(logger);
const bus: Bus = overNats ? await connectNatsBus({ servers: NATS_URL, namespace, name: "list-path-gateway", logger }) : serving;
const service = await startModule(meetingsService, { database: { migrated: db }, bus: serving, logger, settings: {} });
const admin = new pg.Client({ connectionString: database.url });
await admin.connect();
const bare = new pg.Client({ connectionString: database.url });
await bare.connect();
await bare.query(`set search_path to ${meetingsService.schema}`);

try {
  const caller: Caller = { userId: "usr_bench", email: "organizer@example.com", timezone: "UTC", mode: "test", scopes: ["meetings:read", "meetings:write"], apiKeyId: "key_bench" };
  const create = async (i: number) => {
    const startTime = new Date(Math.floor(Date.now() / 3_600_000 + 2 + i) * 3_600_000).toISOString().replace(".000Z", "Z");
    await bus.request(meetingsCreate, { params: {}, query: {}, body: { title: `Planning ${i}`, description: "The weekly plan, and what changed since.", duration: "30 mins", startTime, participants: [`p${i % 7}@example.com`] } } as never, { caller });
  };
  for (let i = 0; i < MEETINGS; i += 50) await Promise.all(Array.from({ length: Math.min(50, MEETINGS - i) }, (_, j) => create(i + j)));
  const backends = async () => (await admin.query<{ pid: number }>("select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()")).rows.map((r) => r.pid);
  const backendCpu = async () => (await backends()).reduce((sum, pid) => sum + processCpuUs(pid), 0);

  const statement = () => {
    const plan = planList("upcoming", new Date());
    const range = { from: plan.endAfter ?? plan.startAfter, to: plan.startBefore ?? plan.startAtOrBefore };
    return calendarPageBesideSql({ mode: "test", userId: caller.userId, email: caller.email, plan, limit: 100, itemBytes: 1_000_000 }, seriesVersionsSql({ mode: "test", users: [caller], ...range }));
  };
  const bareText = (sql: string) => {
    let n = 0;
    return sql.replace(/\?/g, () => `$${++n}`);
  };
  const cases: Record<string, () => Promise<number>> = {
    handler: async () => {
      const reply: HttpReply = await bus.forward(meetingsList, { params: {}, query: { limit: "100" }, body: undefined } as never, { caller });
      const encoded = (reply.body as JsonText).encoded;
      return typeof encoded === "string" ? Buffer.byteLength(encoded) : encoded.byteLength;
    },
    "statement (knex)": async () => {
      const { name, sql, bindings } = statement();
      const result = await db.raw(sql, bindings as Knex.RawBinding[]).options({ name });
      return (result.rows[0].answer as string).length;
    },
    "statement (listCalendar)": async () => {
      const plan = planList("upcoming", new Date());
      const range = { from: plan.endAfter ?? plan.startAfter, to: plan.startBefore ?? plan.startAtOrBefore };
      const page = await listCalendar(db, { mode: "test", userId: caller.userId, email: caller.email, plan, limit: 100, itemBytes: 1_000_000 }, seriesVersionsSql({ mode: "test", users: [caller], ...range }));
      return page.itemsJson.length;
    },
    "statement (bare pg)": async () => {
      const { name, sql, bindings } = statement();
      const result = await bare.query({ name, text: bareText(sql), values: bindings });
      return (result.rows[0].answer as string).length;
    },
  };
  const only = process.argv.find((a) => a.startsWith("--only="))?.slice(7);
  if (only) for (const name of Object.keys(cases)) if (name !== only) delete cases[name];
  const results = new Map<string, { node: number[]; pg: number[]; wallMs: number[]; bytes: number }>();
  for (const name of Object.keys(cases)) results.set(name, { node: [], pg: [], wallMs: [], bytes: 0 });
  console.log(`${overNats ? "over NATS" : "in-process bus"}; ${MEETINGS} meetings, pages of 100; ${ROUNDS} rounds of ${REQUESTS} one at a time per case, the first dropped; load ${load()}`);
  const windowFromUs = Number(process.hrtime.bigint() / 1_000n);
  for (let round = 0; round <= ROUNDS; round++) {
    const names = Object.keys(cases);
    if (round % 2) names.reverse();
    for (const name of names) {
      const run = cases[name]!;
      const pgBefore = await backendCpu();
      const before = process.cpuUsage();
      const t0 = performance.now();
      let bytes = 0;
      for (let i = 0; i < REQUESTS; i++) bytes = await run();
      const wall = performance.now() - t0;
      const used = process.cpuUsage(before);
      const pgUsed = (await backendCpu()) - pgBefore;
      if (round === 0) continue;
      const r = results.get(name)!;
      r.node.push((used.user + used.system) / REQUESTS);
      r.pg.push(pgUsed / REQUESTS);
      r.wallMs.push(wall / REQUESTS);
      r.bytes = bytes;
    }
  }
  if (process.argv.includes("--window")) console.log(`profile window ${windowFromUs} ${Number(process.hrtime.bigint() / 1_000n)}`);
  console.log(`\n| per list of 100 (median of ${ROUNDS}) | node CPU µs | Postgres CPU µs | wall ms | reply bytes |\n|---|---|---|---|---|`);
  for (const [name, r] of results) console.log(`| ${name} | ${median(r.node).toFixed(0)} | ${median(r.pg).toFixed(0)} | ${median(r.wallMs).toFixed(2)} | ${r.bytes} |`);
  console.log(`load ${load()}`);
  const { sql, bindings } = statement();
  const explain = await bare.query({ text: `explain (analyze, buffers, timing off) ${bareText(sql)}`, values: bindings });
  if (process.argv.includes("--explain")) console.log(explain.rows.map((r: { "QUERY PLAN": string }) => r["QUERY PLAN"]).join("\n"));
} finally {
  await admin.end();
  await bare.end();
  await service.stop();
  await bus.close();
  if (overNats) {
    await serving.close();
    await deleteNamespaceStreams(NATS_URL, namespace);
  }
  await db.destroy();
  await database.drop();
}
