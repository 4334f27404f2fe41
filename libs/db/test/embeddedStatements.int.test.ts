import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EmbeddedDatabase } from "../src/embeddedEntry.js";
import { KeptStatements } from "../src/embeddedStatements.js";
import { openSchema, runNamed, namedStatement, type Knex, type Migration } from "../src/index.js";

// The same table name in two schemas, with columns of other types: the same statement text means two statements.
const alphaNotes: Migration[] = [
  { name: "001_notes", up: async (db) => void (await db.schema.createTable("notes", (t) => (t.text("id").primary(), t.text("body")))) },
];
const betaNotes: Migration[] = [
  { name: "001_notes", up: async (db) => void (await db.schema.createTable("notes", (t) => (t.text("id").primary(), t.integer("body")))) },
];
const kinds: Migration[] = [
  {
    name: "001_kinds",
    up: async (db) =>
      void (await db.schema.createTable("kinds", (t) => {
        t.text("id").primary();
        t.timestamp("at", { useTz: true });
        t.jsonb("doc");
        t.bigInteger("big");
        t.specificType("tags", "text[]");
        t.specificType("counts", "int[]");
        t.decimal("price", 10, 2);
        t.boolean("done");
        t.date("day");
      })),
  },
];

/** How many statements the session holds prepared now. */
async function preparedCount(database: EmbeddedDatabase): Promise<number> {
  const { rows } = await database.pglite.query<{ n: number }>("select count(*)::int as n from pg_prepared_statements");
  return rows[0]!.n;
}

describe("statements kept prepared in the embedded database's session", () => {
  let database: EmbeddedDatabase;
  let alpha: Knex;
  let beta: Knex;
  let other: Knex;

  beforeAll(async () => {
    database = await EmbeddedDatabase.open();
    alpha = await openSchema({ kind: "embedded", database }, "alpha", alphaNotes);
    beta = await openSchema({ kind: "embedded", database }, "beta", betaNotes);
    other = await openSchema({ kind: "embedded", database }, "kinds", kinds);
  }, 120_000);

  afterAll(async () => {
    for (const db of [alpha, beta, other]) await db?.destroy();
    await database?.close();
  });

  it("runs the same text on each schema's own table, interleaved, each answering its own rows and types", async () => {
    await alpha("notes").insert({ id: "n-1", body: "text of alpha" });
    await beta("notes").insert({ id: "n-1", body: 7 });
    const statement = namedStatement("notes", "select id, body from notes where id = ?");
    for (let round = 0; round < 3; round++) {
      const [fromAlpha, fromBeta, byKnexAlpha, byKnexBeta] = await Promise.all([
        runNamed(alpha, statement, ["n-1"]),
        runNamed(beta, statement, ["n-1"]),
        alpha("notes").where({ id: "n-1" }),
        beta("notes").where({ id: "n-1" }),
      ]);
      expect(fromAlpha).toEqual([{ id: "n-1", body: "text of alpha" }]);
      expect(fromBeta).toEqual([{ id: "n-1", body: 7 }]);
      expect(byKnexAlpha).toEqual(fromAlpha);
      expect(byKnexBeta).toEqual(fromBeta);
    }
    // Kept: the named statement and knex's select, once per schema.
    expect(await preparedCount(database)).toBeGreaterThanOrEqual(4);
  });

  it("reads every type as PGlite's query does, and counts the rows inserts, updates and deletes touch", async () => {
    const row = {
      id: "k-1",
      at: new Date("2026-11-26T10:00:00.123Z"),
      doc: { a: [1, "two", { three: null }] },
      big: "9007199254740993",
      tags: ["x", "y, z", 'qu"ote'],
      counts: [1, 2, 3],
      price: "12.50",
      done: true,
      day: "2026-11-26",
    };
    const returned = await other("kinds").insert({ ...row, doc: JSON.stringify(row.doc) }).returning("*");
    const sql = "select * from kinds where id = $1 and at = $2 and tags = $3 and big = $4";
    const params = [row.id, row.at, row.tags, row.big];
    const unkept = await database.pglite.query(sql, params);
    const kept = await other.raw("select * from kinds where id = ? and at = ? and tags = ? and big = ?", params);
    expect(kept.rows).toEqual(unkept.rows);
    expect(kept.fields).toEqual(unkept.fields);
    expect(returned).toEqual(unkept.rows);
    expect(unkept.rows[0]).toMatchObject({ at: row.at, doc: row.doc, tags: row.tags, counts: row.counts, done: true });

    await other("kinds").insert([{ id: "k-2" }, { id: "k-3" }]);
    expect(await other("kinds").whereIn("id", ["k-2", "k-3", "k-4"]).update({ done: false })).toBe(2);
    expect(await other("kinds").where("id", "k-2").update({ done: true })).toBe(1);
    expect(await other("kinds").where("id", "k-missing").update({ done: true })).toBe(0);
    expect(await other("kinds").whereIn("id", ["k-2", "k-3"]).delete()).toBe(2);
    expect(await other("kinds").where("id", "k-3").delete()).toBe(0);
  });

  it("after a statement fails inside a transaction that is rolled back, runs it again, and one first sent in the aborted transaction too", async () => {
    const insert = (db: Knex, id: string) => db("notes").insert({ id, body: "b" });
    const readBack = (db: Knex, id: string) => db("notes").where({ id }).first("id");
    await insert(alpha, "dup-1");
    const failed = alpha.transaction(async (trx) => {
      await insert(trx, "dup-2");
      // A unique violation: the kept insert fails, and the transaction is aborted.
      await expect(insert(trx, "dup-1")).rejects.toMatchObject({ code: "23505" });
      // Parsed for the first time in the aborted transaction: Postgres refuses it, so it is not kept.
      await expect(trx("notes").where({ body: "never parsed" }).first("id")).rejects.toMatchObject({ code: "25P02" });
      throw new Error("rolled back on purpose");
    });
    await expect(failed).rejects.toThrow("rolled back on purpose");
    expect(await readBack(alpha, "dup-2")).toBeUndefined();
    // The insert kept before the transaction, and the one refused in it, both run afterwards.
    await insert(alpha, "dup-2");
    expect(await readBack(alpha, "dup-2")).toEqual({ id: "dup-2" });
    expect(await alpha("notes").where({ body: "never parsed" }).first("id")).toBeUndefined();
    // A statement prepared in a transaction rolled back stays prepared, and answers afterwards.
    await expect(
      alpha.transaction(async (trx) => {
        expect(await trx("notes").where({ id: "dup-1", body: "b" }).first("id")).toEqual({ id: "dup-1" });
        throw new Error("rolled back on purpose");
      }),
    ).rejects.toThrow("rolled back on purpose");
    expect(await alpha("notes").where({ id: "dup-1", body: "b" }).first("id")).toEqual({ id: "dup-1" });
    await expect(insert(alpha, "dup-1")).rejects.toMatchObject({ code: "23505", query: expect.stringContaining("insert") });
  });

  it("refuses a value it cannot write without leaving the session inside the statement it began", async () => {
    const unwritable = {
      toJSON: () => {
        throw new TypeError("cannot be written");
      },
    };
    const write = () => alpha.raw("select ?::jsonb as doc", [unwritable as never]);
    await expect(write()).rejects.toThrow(TypeError);
    const refused = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 50));
    // A transaction the refused statement left open would still be at its start.
    const { rows } = await database.pglite.query<{ at: Date }>("select now() as at");
    expect(rows[0]!.at.getTime()).toBeGreaterThan(refused);
    await expect(write()).rejects.toThrow(TypeError);
    // Nothing was left open: a transaction rolled back undoes only its own rows.
    await expect(
      alpha.transaction(async (trx) => {
        await trx("notes").insert({ id: "after-refusal", body: "b" });
        throw new Error("rolled back on purpose");
      }),
    ).rejects.toThrow("rolled back on purpose");
    expect(await alpha("notes").where({ id: "after-refusal" }).first("id")).toBeUndefined();
    expect((await alpha.raw("select ?::jsonb as doc", [{ n: 1 }])).rows).toEqual([{ doc: { n: 1 } }]);
    expect(await database.pglite.query("select 1 as one")).toMatchObject({ rows: [{ one: 1 }] });
  });

  it("answers a statement whose table a migration changed after it was kept", async () => {
    await beta("notes").insert({ id: "wide-1", body: 1 });
    const select = () => beta("notes").where({ id: "wide-1" });
    expect(await select()).toEqual([{ id: "wide-1", body: 1 }]);
    await beta.schema.alterTable("notes", (t) => t.text("extra").defaultTo("added"));
    expect(await select()).toEqual([{ id: "wide-1", body: 1, extra: "added" }]);
    expect(await select()).toEqual([{ id: "wide-1", body: 1, extra: "added" }]);
  });
});

it("closes the statements it gives up, holding no more than its capacity", async () => {
  const database = await EmbeddedDatabase.open();
  try {
    const kept = new KeptStatements(database.pglite, database, 5);
    for (let n = 0; n < 12; n++) {
      const result = await kept.run<{ n: number }>("", `select $1::int + ${n} as n`, [1]);
      expect(result.rows).toEqual([{ n: n + 1 }]);
    }
    expect(kept.size).toBe(5);
    // The last one given up closes with the next call into the database.
    await kept.run("", "select $1::int as n", [1]);
    expect(await preparedCount(database)).toBe(5);
    expect((await kept.run<{ n: number }>("", "select $1::int + 11 as n", [1])).rows).toEqual([{ n: 12 }]);
  } finally {
    await database.close();
  }
}, 60_000);
