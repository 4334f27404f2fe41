import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EmbeddedDatabase } from "../src/embeddedEntry.js";
import { openSchema, type Knex, type Migration } from "../src/index.js";
import { EVENT_LOG_SCHEMA, eventLogMigrations, lastOfStream } from "../src/knexEventLog.js";

// Meetings of one organizer among a few others: without statistics the planner takes any organizer for rare.
const meetings: Migration[] = [
  {
    name: "001_meetings",
    up: async (db) =>
      void (await db.schema.createTable("meetings", (t) => {
        t.text("id").primary();
        t.text("organizer_id").notNullable().index();
      })),
  },
];
const OF_ONE_ORGANIZER = "select count(*)::int as n from meetings where organizer_id = ?";

/**
 * The rows the planner expects the kept statement `sql` to scan for
 * `organizerId`, planned for that organizer now. A custom plan is asked for:
 * a generic one (which Postgres may keep instead, by comparing costs)
 * estimates every organizer alike, and so does not show what the statistics
 * say of this one.
 */
async function expectedRows(database: EmbeddedDatabase, sql: string, organizerId: string): Promise<number> {
  const { rows } = await database.pglite.query<{ name: string }>("select name from pg_prepared_statements where statement = $1", [sql.replace("?", "$1")]);
  await database.pglite.query("set plan_cache_mode = force_custom_plan");
  try {
    const [{ "QUERY PLAN": plan }] = (await database.pglite.query<{ "QUERY PLAN": Array<{ Plan: { Plans: Array<{ "Plan Rows": number }> } }> }>(
      `explain (format json) execute ${rows[0]!.name}('${organizerId}')`,
    )).rows as [{ "QUERY PLAN": Array<{ Plan: { Plans: Array<{ "Plan Rows": number }> } }> }];
    return plan[0]!.Plan.Plans[0]!["Plan Rows"];
  } finally {
    await database.pglite.query("reset plan_cache_mode");
  }
}

/** When the table was last analyzed (null: never). */
async function lastAnalyzed(db: Knex): Promise<Date | null> {
  const { rows } = await db.raw<{ rows: Array<{ at: Date | null }> }>("select last_analyze as at from pg_stat_user_tables where schemaname = 'calendar' and relname = 'meetings'");
  return rows[0]?.at ?? null;
}

/** 5,000 meetings, all but 100 of one organizer. */
async function grow(db: Knex): Promise<void> {
  await db("meetings").insert(Array.from({ length: 5_000 }, (_, i) => ({ id: `mtg_${i}`, organizer_id: i < 4_900 ? "usr_one" : `usr_${i}` })));
}

async function ofOneOrganizer(db: Knex): Promise<number> {
  return (await db.raw<{ rows: Array<{ n: number }> }>(OF_ONE_ORGANIZER, ["usr_one"])).rows[0]!.n;
}

/** Postgres publishes a session's counts of changed rows at most once a second: `until` is asked again until then. */
async function within30s(until: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await until()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
}

describe("statistics of the embedded database's tables", () => {
  let database: EmbeddedDatabase;
  let db: Knex;

  beforeAll(async () => {
    // Analyzed here when the test says so.
    database = await EmbeddedDatabase.open(undefined, { analyzeCheckEveryMs: 3_600_000 });
    db = await openSchema({ kind: "embedded", database }, "calendar", meetings);
  }, 120_000);

  afterAll(async () => {
    await db?.destroy();
    await database?.close();
  });

  it("When a table grew, then it is analyzed, and its kept statements are planned for a value on the statistics of what it holds", async () => {
    // Run often enough before the table grows to be kept on a generic plan made without statistics.
    for (let i = 0; i < 8; i++) expect(await ofOneOrganizer(db)).toBe(0);
    await grow(db);
    expect(await ofOneOrganizer(db)).toBe(4_900);
    expect(await expectedRows(database, OF_ONE_ORGANIZER, "usr_one")).toBeLessThan(100);
    let analyzed: string[] = [];
    await within30s(async () => (analyzed = await database.analyzeChanged()).length > 0);
    expect(analyzed).toEqual(["calendar.meetings"]);
    expect(await ofOneOrganizer(db)).toBe(4_900);
    expect(await expectedRows(database, OF_ONE_ORGANIZER, "usr_one")).toBeGreaterThan(4_000);
  }, 60_000);

  it("When a table has not changed since it was analyzed, then it is not analyzed again", async () => {
    const analyzed = await lastAnalyzed(db);
    expect(analyzed).not.toBeNull();
    expect(await database.analyzeChanged()).toEqual([]);
    expect(await lastAnalyzed(db)).toEqual(analyzed);
  });
});

describe("an embedded database left to itself", () => {
  it("When a table grew, then it is analyzed without being asked", async () => {
    const database = await EmbeddedDatabase.open(undefined, { analyzeCheckEveryMs: 200 });
    const db = await openSchema({ kind: "embedded", database }, "calendar", meetings);
    try {
      await grow(db);
      await within30s(async () => (await lastAnalyzed(db)) !== null);
      expect(await lastAnalyzed(db)).not.toBeNull();
    } finally {
      await db.destroy();
      await database.close();
    }
  }, 120_000);
});

describe("the event log's last event of a stream, on an analyzed log", () => {
  it("When one stream holds nearly every event, then a rare stream's last event is read through the stream's index, not by a walk of the log", async () => {
    const database = await EmbeddedDatabase.open(undefined, { analyzeCheckEveryMs: 3_600_000 });
    const db = await openSchema({ kind: "embedded", database }, EVENT_LOG_SCHEMA, eventLogMigrations);
    try {
      // The rare stream's events come first: a walk back from the newest passes every other event before it finds one.
      await db.raw(`insert into events (stream, subject, payload, headers, msg_id)
        select case when i <= 50 then 'accounts' else 'meetings' end, 'sched.events', '{}', '{}', 'evt_' || i from generate_series(1, 20000) as i`);
      await within30s(async () => (await database.analyzeChanged()).includes(`${EVENT_LOG_SCHEMA}.events`));
      const { rows } = await db.raw<{ rows: Array<{ "QUERY PLAN": Array<{ Plan: Record<string, unknown> }> }> }>(
        `explain (analyze, format json) select given.stream, (${lastOfStream("given.stream")}) as last from (values ('accounts'), ('meetings')) as given(stream)`,
      );
      const plan = JSON.stringify(rows[0]!["QUERY PLAN"]);
      expect(plan).toContain('"Index Name":"events_stream_last"');
      expect(plan).not.toContain("Rows Removed by Filter");
      const { rows: last } = await db.raw<{ rows: Array<{ msg_id: string }> }>(`${lastOfStream("?")}`, ["accounts"]);
      expect(last).toEqual([{ msg_id: "evt_50" }]);
    } finally {
      await db.destroy();
      await database.close();
    }
  }, 120_000);
});
