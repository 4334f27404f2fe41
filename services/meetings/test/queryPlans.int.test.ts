import { replyBodyBudget } from "@sched/bus";
import type { Knex } from "@sched/db";
import { MEETING_FILTERS } from "@sched/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { busyIntervals, busySql, calendarPageBesideSql, calendarPageSql, listCalendar, seriesVersionsSql } from "../src/db/queries.js";
import { planList, withWindow } from "../src/domain/filters.js";
import { startMeetings, type TestMeetings } from "./harness.js";

/**
 * The list and busy queries stay index scans that read little more than they
 * return at 100,000 meetings organized and 100,000 attended by one user.
 */
let h: TestMeetings;
const USER = { userId: "usr_planplanplanplanplanplan", email: "planner@example.com" };
const PER_USER = 100_000;

beforeAll(async () => {
  h = await startMeetings();
  await h.db.raw(
    `insert into meetings (id, mode, organizer_id, organizer_email, title, description, start_time, end_time, duration, participants, status, sequence, created_at, updated_at)
     select 'mtg_o' || lpad(i::text, 23, '0'), 'test', ?, ?, 'Seeded', '', s, s + interval '30 minutes', '30 mins',
            array['p' || (i % 50) || '@example.com'],
            case i % 10 when 0 then 'draft' when 1 then 'cancelled' else 'confirmed' end, 1, now(), now()
       from generate_series(1, ?) as i, lateral (select now() - interval '520 days' + i * interval '15 minutes' as s) t`,
    [USER.userId, USER.email, PER_USER],
  );
  await h.db.raw(
    `insert into meetings (id, mode, organizer_id, organizer_email, title, description, start_time, end_time, duration, participants, status, sequence, created_at, updated_at)
     select 'mtg_a' || lpad(i::text, 23, '0'), case when i % 20 = 0 then 'live' else 'test' end, 'usr_other' || (i % 1000), 'other' || (i % 1000) || '@example.com',
            'Seeded', '', s, s + interval '1 hour', '1 hour', array[?::text],
            case i % 10 when 0 then 'draft' else 'confirmed' end, 1, now(), now()
       from generate_series(1, ?) as i, lateral (select now() - interval '520 days' + i * interval '15 minutes' + interval '7 minutes' as s) t`,
    [USER.email, PER_USER],
  );
  await addParticipantRowsAndAnalyze(h.db);
}, 120_000);
afterAll(async () => h?.close());

/** The participant row of each seeded meeting's one participant, then fresh statistics, as after a day of use. */
async function addParticipantRowsAndAnalyze(db: Knex): Promise<void> {
  await db.raw(
    `insert into meeting_participants (meeting_id, email, mode, status, start_time, end_time)
     select id, participants[1], mode, status, start_time, end_time from meetings`,
  );
  await db.raw("analyze meetings");
  await db.raw("analyze meeting_participants");
}

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Actual Rows"?: number;
  "Actual Loops"?: number;
  "Rows Removed by Filter"?: number;
  Plans?: PlanNode[];
}

async function explain(db: Knex, q: { sql: string; bindings: unknown[] }): Promise<{ root: PlanNode; ms: number }> {
  const result = await db.raw(`explain (analyze, buffers, format json) ${q.sql}`, q.bindings as Knex.RawBinding[]);
  const [doc] = result.rows[0]["QUERY PLAN"] as [{ Plan: PlanNode; "Execution Time": number }];
  return { root: doc.Plan, ms: doc["Execution Time"] };
}

function nodes(root: PlanNode): PlanNode[] {
  return [root, ...(root.Plans ?? []).flatMap(nodes)];
}

/** Every read of the two tables is an index scan, and together they touch at most `maxRows` rows. */
function expectIndexScans(root: PlanNode, maxRows: number) {
  const reads = nodes(root).filter((n) => n["Relation Name"] === "meetings" || n["Relation Name"] === "meeting_participants");
  expect(reads.length).toBeGreaterThan(0);
  for (const n of reads) expect(["Index Scan", "Index Only Scan"]).toContain(n["Node Type"]);
  expect(nodes(root).some((n) => n["Node Type"] === "Seq Scan")).toBe(false);
  const touched = reads.reduce((sum, n) => sum + ((n["Actual Rows"] ?? 0) + (n["Rows Removed by Filter"] ?? 0)) * (n["Actual Loops"] ?? 1), 0);
  expect(touched).toBeLessThanOrEqual(maxRows);
}

describe("query plans at 100,000 meetings per user", () => {
  it.each(MEETING_FILTERS)("the %s list is index scans, first page and a page in the middle", async (filter) => {
    const plan = planList(filter, new Date());
    const base = { mode: "test" as const, ...USER, plan, limit: 100 };
    const first = await explain(h.db, calendarPageSql(base));
    expectIndexScans(first.root, 1_500);
    const middle = (await h.db("meetings").select("id", "start_time").where({ id: "mtg_o" + "50000".padStart(23, "0") }).first()) as { id: string; start_time: Date };
    const after = await explain(h.db, calendarPageSql({ ...base, after: { id: middle.id, startTime: new Date(middle.start_time) } }));
    expectIndexScans(after.root, 1_500);
    expect(first.ms).toBeLessThan(250);
  });

  it.each(MEETING_FILTERS)("the %s list in a week's window is index scans, first page and the next", async (filter) => {
    const now = new Date();
    const window = { from: new Date(now.getTime() - 3 * 86_400_000), to: new Date(now.getTime() + 4 * 86_400_000) };
    const base = { mode: "test" as const, ...USER, plan: withWindow(planList(filter, now), window), limit: 100 };
    const first = await explain(h.db, calendarPageSql(base));
    expectIndexScans(first.root, 1_500);
    expect(first.ms).toBeLessThan(250);
    const items = JSON.parse((await listCalendar(h.db, base, seriesVersionsSql({ mode: "test", users: [USER], ...window }))).itemsJson) as { id: string; startTime: string; duration: string }[];
    expect(items).toHaveLength(100);
    for (const item of items) {
      expect(new Date(item.startTime).getTime()).toBeLessThan(window.to.getTime());
      expect(new Date(item.startTime).getTime() + 2 * 3_600_000).toBeGreaterThan(window.from.getTime());
    }
    const last = items[99]!;
    const next = await explain(h.db, calendarPageSql({ ...base, after: { id: last.id, startTime: new Date(last.startTime) } }));
    expectIndexScans(next.root, 1_500);
  });

  it.each(MEETING_FILTERS)("the %s list is one statement (the series' versions beside it) prepared once per connection, whatever the page size", async (filter) => {
    const q = { mode: "test" as const, ...USER, plan: planList(filter, new Date()), limit: 20 };
    const plans = await h.db.transaction(async (trx) => {
      for (let i = 0; i < 8; i++) {
        const page = await listCalendar(trx, i % 2 === 0 ? q : { ...q, limit: 100 }, seriesVersionsSql({ mode: "test", users: [USER], from: new Date() }));
        expect(page.beside).toBeNull();
        expect(JSON.parse(page.itemsJson)).toHaveLength(i % 2 === 0 ? 20 : 100);
        expect(page.hasMore).toBe(true);
      }
      const { rows } = await trx.raw("select generic_plans, custom_plans from pg_prepared_statements where name = ?", [calendarPageBesideSql(q, seriesVersionsSql({ mode: "test", users: [USER] })).name]);
      return rows as { generic_plans: number; custom_plans: number }[];
    });
    expect(plans).toHaveLength(1);
    expect(plans[0]!.generic_plans + plans[0]!.custom_plans).toBe(8);
  });

  it("one user's busy time (a day view) is planned once per connection: Postgres settles on the generic plan", async () => {
    const day = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000 + 9 * 3_600_000);
    const plans = await h.db.transaction(async (trx) => {
      for (let i = 0; i < 8; i++) {
        const from = new Date(day.getTime() + (i % 7) * 86_400_000);
        const busy = await busyIntervals(trx, { mode: "test", users: [USER], from, to: new Date(from.getTime() + 8 * 3_600_000) }, seriesVersionsSql({ mode: "test", users: [USER], from, confirmedOnly: true }));
        expect(busy.intervals.length).toBeGreaterThan(0);
      }
      const { rows } = await trx.raw("select generic_plans, custom_plans from pg_prepared_statements where name like 'busy_beside_%'");
      return rows as { generic_plans: number; custom_plans: number }[];
    });
    expect(plans).toHaveLength(1);
    expect(plans[0]!.generic_plans + plans[0]!.custom_plans).toBe(8);
    // Five plans per call before Postgres compares; a statement whose generic plan looks dearer is planned on every call.
    expect(plans[0]!.generic_plans).toBeGreaterThan(0);
  });

  it("the busy query for 100 users over a week is index scans", async () => {
    const users = [USER, ...Array.from({ length: 99 }, (_, i) => ({ userId: `usr_other${i}`, email: `other${i}@example.com` }))];
    const from = new Date();
    const to = new Date(from.getTime() + 7 * 86_400_000);
    const { root, ms } = await explain(h.db, busySql({ mode: "test", users, from, to }));
    // The planner user alone has about 2 × 4 × 24 × 7 meetings in a week.
    expectIndexScans(root, 3_000);
    expect(ms).toBeLessThan(250);
  });
});

/**
 * A calendar most of whose meetings the user organizes (nine in ten rows of
 * the whole table): the attended branch must stay a bounded index walk in
 * the plans Postgres makes per call and in the generic plan it settles on.
 */
describe("query plans when one user organizes most of the table", () => {
  let solo: TestMeetings;
  const OWNER = { userId: "usr_solosolosolosolosolosolo", email: "solo@example.com" };

  beforeAll(async () => {
    solo = await startMeetings();
    await solo.db.raw(
      `insert into meetings (id, mode, organizer_id, organizer_email, title, description, start_time, end_time, duration, participants, status, sequence, created_at, updated_at)
       select 'mtg_s' || lpad(i::text, 23, '0'), 'test',
              case when i % 10 = 0 then 'usr_host' || (i % 200) else ? end,
              case when i % 10 = 0 then 'host' || (i % 200) || '@example.com' else ? end,
              'Seeded', '', s, s + interval '30 minutes', '30 mins',
              case when i % 10 = 0 then array[?::text] else array['guest' || (i % 500) || '@example.com'] end,
              case i % 20 when 1 then 'draft' when 2 then 'cancelled' else 'confirmed' end, 1, now(), now()
         from generate_series(1, 100000) as i, lateral (select now() - interval '730 days' + i * interval '15 minutes' as s) t`,
      [OWNER.userId, OWNER.email, OWNER.email],
    );
    await addParticipantRowsAndAnalyze(solo.db);
  }, 120_000);
  afterAll(async () => solo?.close());

  /** EXPLAIN of the statement as prepared, with the generic plan forced. */
  async function explainGeneric(q: { sql: string; bindings: unknown[] }): Promise<PlanNode> {
    return solo.db.transaction(async (trx) => {
      await trx.raw("set local plan_cache_mode = force_generic_plan");
      let n = 0;
      await trx.raw(`prepare calendar_generic as ${q.sql.replace(/\?/g, () => `$${++n}`)}`);
      // EXPLAIN EXECUTE takes no bound parameters: the values go in as literals.
      const literals = q.bindings.map((v) => (typeof v === "number" || v === null ? String(v) : `'${String(v).replace(/'/g, "''")}'`));
      const result = await trx.raw(`explain (analyze, format json) execute calendar_generic(${literals.join(", ")})`);
      await trx.raw("deallocate calendar_generic");
      return (result.rows[0]["QUERY PLAN"] as [{ Plan: PlanNode }])[0].Plan;
    });
  }

  it.each(MEETING_FILTERS)("the %s list is index scans, planned per call and generic", async (filter) => {
    const q = calendarPageSql({ mode: "test", ...OWNER, plan: planList(filter, new Date()), limit: 100, itemBytes: replyBodyBudget(1024 * 1024) });
    expectIndexScans((await explain(solo.db, q)).root, 1_500);
    expectIndexScans(await explainGeneric(q), 1_500);
  });
});
