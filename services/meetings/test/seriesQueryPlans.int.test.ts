import type { Knex } from "@sched/db";
import { afterAll, beforeAll, expect, it } from "vitest";
import { readSeriesVersions, seriesVersionsSql, seriesWithExceptionsSql } from "../src/db/queries.js";
import { startMeetings, type TestMeetings } from "./harness.js";

/**
 * The series queries stay index scans among 20,000 series of 1,000 users:
 * the user's 220 series (200 organized, 20 attended by e-mail) and the
 * exceptions near a window are found without reading the others.
 */
let h: TestMeetings;
const USER = { userId: "usr_seriesseriesseriesserie", email: "weekly@example.com" };

beforeAll(async () => {
  h = await startMeetings();
  await h.db.raw(
    `insert into meeting_series (id, mode, organizer_id, organizer_email, title, description, start_time, duration, participants, status, sequence,
                                 created_at, updated_at, recurrence, time_zone, last_end)
     select 'mtg_s' || lpad(i::text, 23, '0'), 'test', case when i % 100 = 0 then ? else 'usr_other' || (i % 1000) end, 'o@example.com', 'Weekly', '',
            now() - (i % 365) * interval '1 day', '30 mins', array['p' || (i % 500) || '@example.com'], 'confirmed', 1, now(), now(),
            'FREQ=WEEKLY;COUNT=104', 'Europe/Berlin', now() - (i % 365) * interval '1 day' + interval '103 weeks 30 minutes'
       from generate_series(1, 20000) as i`,
    [USER.userId],
  );
  await h.db.raw(
    `insert into series_participants (series_id, email, mode, last_end)
     select id, case when right(id, 3) = '050' then ? else participants[1] end, mode, last_end from meeting_series`,
    [USER.email],
  );
  await h.db.raw(
    `insert into meeting_exceptions (series_id, original_start, title, description, start_time, end_time, duration, participants, status, sequence)
     select s.id, s.start_time + k * interval '1 week', 'Moved', '', s.start_time + k * interval '1 week' + interval '1 hour',
            s.start_time + k * interval '1 week' + interval '90 minutes', '30 mins', s.participants, 'confirmed', 2
       from meeting_series s, generate_series(1, 5) as k`,
  );
  for (const table of ["meeting_series", "series_participants", "meeting_exceptions"]) await h.db.raw(`analyze ${table}`);
}, 120_000);
afterAll(async () => h?.close());

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Actual Rows"?: number;
  "Actual Loops"?: number;
  "Rows Removed by Filter"?: number;
  Plans?: PlanNode[];
}

async function explain(db: Knex, q: { sql: string; bindings: unknown[] }): Promise<{ rows: number; reads: PlanNode[]; all: PlanNode[] }> {
  const result = await db.raw(`explain (analyze, format json) ${q.sql}`, q.bindings as Knex.RawBinding[]);
  const [doc] = result.rows[0]["QUERY PLAN"] as [{ Plan: PlanNode }];
  const all = (function flat(n: PlanNode): PlanNode[] {
    return [n, ...(n.Plans ?? []).flatMap(flat)];
  })(doc.Plan);
  const reads = all.filter((n) => n["Relation Name"] !== undefined);
  return { rows: doc.Plan["Actual Rows"] ?? 0, reads, all };
}

const touched = (reads: PlanNode[]) => reads.reduce((sum, n) => sum + ((n["Actual Rows"] ?? 0) + (n["Rows Removed by Filter"] ?? 0)) * (n["Actual Loops"] ?? 1), 0);

it("the versions of a calendar's series that may overlap a window are index scans reading about what they name", async () => {
  const now = new Date();
  const q = seriesVersionsSql({ mode: "test", users: [USER], from: now, to: new Date(now.getTime() + 86_400_000) });
  const plan = await explain(h.db, { sql: `select ${q.sql} as versions`, bindings: q.bindings });
  for (const n of plan.reads) expect(["Index Scan", "Index Only Scan", "Bitmap Heap Scan"]).toContain(n["Node Type"]);
  expect(plan.all.some((n) => n["Node Type"] === "Seq Scan")).toBe(false);
  expect(touched(plan.reads)).toBeLessThan(3_000);
  // The organized series give their versions from the rows their range reads: only the 20 attended ones are looked up by primary key.
  const byKey = plan.reads.filter((n) => n["Index Name"] === "meeting_series_pkey").reduce((sum, n) => sum + (n["Actual Loops"] ?? 1), 0);
  expect(byKey).toBeLessThanOrEqual(20);
  const { rows } = await h.db.raw(`select ${q.sql} as versions`, q.bindings as Knex.RawBinding[]);
  expect(readSeriesVersions((rows as { versions: string }[])[0]!.versions)).toHaveLength(220); // 200 organized, 20 attended
});

it("the series read again, each with all of its exceptions, are index scans", async () => {
  const ids = ((await h.db("meeting_series").select("id").where({ organizer_id: USER.userId })) as { id: string }[]).map((r) => r.id);
  const plan = await explain(h.db, seriesWithExceptionsSql(ids, "test"));
  expect(plan.rows).toBe(200);
  expect(plan.all.some((n) => n["Node Type"] === "Seq Scan")).toBe(false);
  expect(touched(plan.reads)).toBeLessThan(5_000);
});
