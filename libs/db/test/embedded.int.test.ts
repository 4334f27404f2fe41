import { folderBytes } from "@sched/testing";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EmbeddedDatabase, joinsCallersTransaction } from "../src/embeddedEntry.js";
import { openSchema, type Knex, type Migration } from "../src/index.js";

const notes: Migration[] = [{ name: "001_notes", up: async (db) => void (await db.schema.createTable("notes", (t) => t.text("id").primary())) }];
const tags: Migration[] = [
  { name: "001_tags", up: async (db) => void (await db.schema.createTable("tags", (t) => t.text("id").primary())) },
  { name: "002_notes_too", up: async (db) => void (await db.schema.createTable("notes", (t) => t.text("tag").primary())) },
];

describe("one embedded database holding several schemas", () => {
  let database: EmbeddedDatabase;
  let a: Knex;
  let b: Knex;
  let log: Knex;

  beforeAll(async () => {
    database = await EmbeddedDatabase.open();
    a = await openSchema({ kind: "embedded", database }, "alpha", notes);
    b = await openSchema({ kind: "embedded", database }, "beta", tags);
    log = await openSchema({ kind: "embedded", database, joinsTransactions: true }, "journal", [
      { name: "001_entries", up: async (db) => void (await db.schema.createTable("entries", (t) => t.text("id").primary())) },
    ]);
  }, 120_000);

  afterAll(async () => {
    for (const db of [a, b, log]) await db?.destroy();
    await database?.close();
  });

  it("gives each schema its own migrations and tables of the same name, each handle seeing its own", async () => {
    const applied = async (schema: string) => (await a.raw(`select name from ${schema}.schema_migrations order by name`)).rows.map((r: { name: string }) => r.name);
    expect(await applied("alpha")).toEqual(["001_notes"]);
    expect(await applied("beta")).toEqual(["001_tags", "002_notes_too"]);
    await a("notes").insert({ id: "a-1" });
    await b("notes").insert({ tag: "b-1" });
    // Interleaved, each query runs on its own schema's table.
    const [fromA, fromB] = await Promise.all([a("notes").select("id"), b("notes").select("tag")]);
    expect(fromA).toEqual([{ id: "a-1" }]);
    expect(fromB).toEqual([{ tag: "b-1" }]);
    // Opened again, nothing is left to migrate.
    const again = await openSchema({ kind: "embedded", database }, "beta", tags);
    expect(await applied("beta")).toEqual(["001_tags", "002_notes_too"]);
    await again.destroy();
  });

  it("runs another handle's query only after a transaction holding the session ends, never inside it", async () => {
    let release!: () => void;
    let holding!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const inTransaction = new Promise<void>((resolve) => (holding = resolve));
    const rolledBack = a.transaction(async (trx) => {
      await trx("notes").insert({ id: "a-rolled-back" });
      holding();
      await held;
      throw new Error("rolled back on purpose");
    });
    await inTransaction;
    const order: string[] = [];
    const write = b("tags")
      .insert({ id: "b-after" })
      .then(() => order.push("b wrote"));
    await new Promise((r) => setTimeout(r, 200));
    order.push("transaction ends");
    release();
    await expect(rolledBack).rejects.toThrow("rolled back on purpose");
    await write;
    expect(order).toEqual(["transaction ends", "b wrote"]);
    // b's write was not part of the rolled-back transaction.
    expect(await b("tags").where({ id: "b-after" }).first("id")).toEqual({ id: "b-after" });
    expect(await a("notes").where({ id: "a-rolled-back" }).first("id")).toBeUndefined();
  });

  it("lets a joining handle write inside the caller's transaction, kept or undone with it, without waiting for it", async () => {
    expect(joinsCallersTransaction(log)).toBe(false);
    await a.transaction(async (trx) => {
      expect(joinsCallersTransaction(log)).toBe(true);
      await trx("notes").insert({ id: "a-kept" });
      await log.withSchema("journal").table("entries").insert({ id: "kept" });
    });
    await expect(
      a.transaction(async (trx) => {
        await trx("notes").insert({ id: "a-undone" });
        await log.withSchema("journal").table("entries").insert({ id: "undone" });
        throw new Error("undone on purpose");
      }),
    ).rejects.toThrow("undone on purpose");
    expect((await log.withSchema("journal").table("entries").select("id").orderBy("id")).map((r: { id: string }) => r.id)).toEqual(["kept"]);
    // A handle that does not join waits for the session instead: b's query inside a's transaction would wait for itself.
    await a.transaction(async () => expect(joinsCallersTransaction(b)).toBe(false));
  });

  it("takes its session back from a handle destroyed while that handle's query runs, so the other handles go on", async () => {
    const stopping = await openSchema({ kind: "embedded", database }, "gamma", []);
    // The statement runs on the database's thread while the handle is destroyed, as a service stopping beside its own timer's work.
    const running = stopping.raw("select count(*)::int as n from generate_series(1, 200000)").then((result) => result);
    while (database.session.numUsed() === 0) await new Promise((resolve) => setImmediate(resolve));
    await stopping.destroy();
    expect((await running).rows).toEqual([{ n: 200000 }]);
    expect(await a("notes").where({ id: "a-1" }).select("id")).toEqual([{ id: "a-1" }]);
    await expect(stopping.raw("select 1")).rejects.toThrow(/Unable to acquire a connection/);
  });

  it("keeps nothing of the answers it handed over on the database's thread, however many rows were read", async () => {
    const handle = await openSchema({ kind: "embedded", database }, "delta", []);
    const before = await database.pglite.threadHeapUsed();
    // 100 answers of 1 MB each: a thread that kept what it read would hold 100 MB more.
    for (let i = 0; i < 100; i++) {
      const { rows } = await handle.raw("select repeat(?, 1048576) as page", [String(i % 10)]);
      expect(rows[0].page).toHaveLength(1_048_576);
    }
    const grown = (await database.pglite.threadHeapUsed()) - before;
    await handle.destroy();
    expect(grown).toBeLessThan(20 * 1_048_576);
  });
});

describe("an embedded database on disk", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "sched-embedded-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("keeps its data across a reopening in a folder of tens of MB, however many rows its updates left behind and however much WAL they made", async () => {
    // Vacuumed often here, as a long-running database is every few minutes.
    let database = await EmbeddedDatabase.open(join(dir, "pg"), { vacuumEveryMs: 100 });
    let db = await openSchema({ kind: "embedded", database }, "alpha", notes);
    const settings = await db.raw("select current_setting('wal_segment_size') as segment, current_setting('max_wal_size') as max");
    expect(settings.rows).toEqual([{ segment: "1MB", max: "16MB" }]);
    await db.schema.alterTable("notes", (t) => t.text("body"));
    await db("notes").insert(Array.from({ length: 2_000 }, (_, i) => ({ id: `n-${i}` })));
    // About 100 MB of row versions and WAL on the same 2,000 rows: several checkpoints' worth.
    for (let round = 0; round < 40; round++) {
      await db("notes").update({ body: `${round}`.padEnd(1_000, "x") });
      await new Promise((r) => setTimeout(r, 100));
    }
    await db.destroy();
    await database.close();
    database = await EmbeddedDatabase.open(join(dir, "pg"));
    db = await openSchema({ kind: "embedded", database }, "alpha", notes);
    expect(await db("notes").where("body", "like", "39x%").count("* as n").first()).toEqual({ n: 2_000 });
    await db.destroy();
    await database.close();
    expect(folderBytes(join(dir, "pg"))).toBeLessThan(50e6);
  }, 300_000);
});
