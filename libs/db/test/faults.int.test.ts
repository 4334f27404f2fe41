import { AppError, isBackingServiceUnavailable, withDeadline } from "@sched/errors";
import { clusterServersAvailable, eventually, freePort } from "@sched/testing";
import knexFactory from "knex";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { EmbeddedDatabase } from "../src/embeddedEntry.js";
import { databaseAnswers, openSchema, type Knex } from "../src/index.js";
import { testDatabases } from "./testDatabases.js";

const postgresUp = await clusterServersAvailable();
const { postgresUrl, target } = testDatabases();

/** A query run inside a request with `deadline` (knex runs a query when it is awaited, so it is awaited there). */
const query = (db: Knex, deadline: number) => withDeadline(deadline, async () => await db.raw("select 1"));

/** What `work` fails with, and after how long. */
async function failure(work: () => Promise<unknown>): Promise<{ err: unknown; ms: number }> {
  const started = Date.now();
  try {
    await work();
  } catch (err) {
    return { err, ms: Date.now() - started };
  }
  throw new Error("expected the work to fail");
}

describe.each([
  ["postgres", postgresUp],
  ["pglite", true],
] as const)("the pool of a schema on %s, inside a request", (kind, available) => {
  it.runIf(available)("waits for a connection no longer than the request's deadline, and not at all once it has passed", async () => {
    const db = await openSchema(await target(kind, 1), "faults", []);
    // The one connection is taken, as by a request still running.
    const holder = await db.transaction();
    try {
      const late = await failure(() => query(db, Date.now() + 300));
      expect(late.ms).toBeLessThan(2_500); // the pool's own wait is 5 s or more
      expect(isBackingServiceUnavailable(late.err)).toBe(true);

      const passed = await failure(() => query(db, Date.now() - 1));
      expect(passed.err).toBeInstanceOf(AppError);
      expect((passed.err as AppError).code).toBe("service_unavailable");
    } finally {
      await holder.rollback();
    }
    // Outside a request, and once the connection is free, the pool serves as before.
    expect((await db.raw("select 1 as one")).rows).toEqual([{ one: 1 }]);
    await query(db, Date.now() + 2_000);
    await db.destroy();
  });
});

describe("the errors a database that is down gives", () => {
  it.runIf(postgresUp)("count as unavailable: a refused connection, a terminated one and a full pool", async () => {
    const port = await freePort();
    const nobody = knexFactory({ client: "pg", connection: `postgres://postgres@127.0.0.1:${port}/postgres`, pool: { min: 0, max: 1 } });
    const refused = await failure(() => nobody.raw("select 1"));
    await nobody.destroy();
    expect(isBackingServiceUnavailable(refused.err), String(refused.err)).toBe(true);

    const url = await postgresUrl();
    const db = knexFactory({ client: "pg", connection: { connectionString: url, application_name: "faults_victim" }, pool: { min: 0, max: 1 }, acquireConnectionTimeout: 300 });
    const sleeping = failure(() => db.raw("select pg_sleep(10)"));
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const full = await failure(() => db.raw("select 1"));
    expect(isBackingServiceUnavailable(full.err), String(full.err)).toBe(true);
    // A restart or an operator ends the connection under a running statement.
    await admin.query("select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'faults_victim'");
    const terminated = await sleeping;
    await admin.end();
    await db.destroy();
    expect(isBackingServiceUnavailable(terminated.err), String(terminated.err)).toBe(true);
  });

  it("count as unavailable for embedded Postgres once it is closed, unlike its SQL errors", async () => {
    const database = await EmbeddedDatabase.open();
    const db = database.pglite;
    const sqlError = await failure(() => db.query("select * from no_such_table"));
    await database.close();
    const closed = await failure(() => db.query("select 1"));
    expect(isBackingServiceUnavailable(closed.err), String(closed.err)).toBe(true);
    expect(isBackingServiceUnavailable(sqlError.err)).toBe(false);
  });

  it("count as unavailable for embedded Postgres whose thread ended, for the statement it had in hand and every one after", async () => {
    const database = await EmbeddedDatabase.open();
    const db = database.pglite;
    const inHand = failure(() => db.query("select count(*) from generate_series(1, 1000000)"));
    // As the thread would end should PGlite abort: what it had in hand is answered, not left waiting.
    await (db as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
    const lost = await inHand;
    const after = await failure(() => db.query("select 1"));
    expect(isBackingServiceUnavailable(lost.err), String(lost.err)).toBe(true);
    expect(isBackingServiceUnavailable(after.err), String(after.err)).toBe(true);
    await database.close();
  });
});

describe("a statement left waiting on Postgres", () => {
  it.runIf(postgresUp)("is ended at the statement time-out, counts as unavailable and gives its connection back; migrations are not bounded", async () => {
    const url = await postgresUrl();
    // A migration longer than the requests' bound still runs to its end.
    const slowMigration = { name: "001_slow", up: async (k: Knex) => void (await k.raw("select pg_sleep(0.8)")) };
    const db = await openSchema({ kind: "postgres", url, poolMax: 1, statementTimeoutMs: 300 }, "faults", [slowMigration]);
    const observer = new pg.Client({ connectionString: url });
    await observer.connect();
    try {
      await db.schema.createTable("slots", (t) => t.integer("id").primary());
      await db("slots").insert({ id: 1 });
      // Another session holds the row, as a stuck transaction would.
      await observer.query("begin");
      await observer.query("select * from faults.slots where id = 1 for update");
      const waited = await failure(() => db("slots").where({ id: 1 }).forUpdate());
      await observer.query("rollback");
      expect((waited.err as { code?: string }).code).toBe("57014");
      expect(isBackingServiceUnavailable(waited.err)).toBe(true);
      // The pool's one connection serves the next statement.
      expect(await db("slots").count({ n: "*" })).toEqual([{ n: 1 }]);

      // A transaction of ours left open is ended by Postgres too.
      const forgotten = await db.transaction();
      try {
        await forgotten.raw("select 1");
        const idleInTransaction = async () => (await observer.query("select count(*)::int as n from pg_stat_activity where application_name = 'faults' and state = 'idle in transaction'")).rows[0].n as number;
        expect(await idleInTransaction()).toBe(1);
        await eventually(async () => (await idleInTransaction()) === 0 || undefined, 10_000);
        const ended = await failure(() => forgotten.raw("select 1"));
        expect(isBackingServiceUnavailable(ended.err), String(ended.err)).toBe(true);
      } finally {
        await forgotten.rollback().catch(() => undefined);
      }
      expect((await db.raw("select 1 as one")).rows).toEqual([{ one: 1 }]);
    } finally {
      await observer.end();
      await db.destroy();
    }
  });
});

describe("the readiness probe of the database", () => {
  it.runIf(postgresUp)("answers on a connection of its own while every pooled connection is busy", async () => {
    const url = await postgresUrl();
    const db: Knex = await openSchema({ kind: "postgres", url, poolMax: 1 }, "faults", []);
    const holder = await db.transaction();
    try {
      expect(await databaseAnswers(url, 1_000)).toBe(true);
    } finally {
      await holder.rollback();
      await db.destroy();
    }
  });

  it("says no, within its time-out, when nothing answers", async () => {
    const started = Date.now();
    expect(await databaseAnswers(`postgres://postgres@127.0.0.1:${await freePort()}/postgres`, 1_000)).toBe(false);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
