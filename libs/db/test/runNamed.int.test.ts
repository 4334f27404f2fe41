import { withDeadline } from "@sched/errors";
import { describe, expect, it } from "vitest";
import { namedStatement, openSchema, runNamed, type Migration } from "../src/index.js";
import { testDatabases } from "./testDatabases.js";

const migrations: Migration[] = [
  { name: "001_create_items", up: async (db) => void (await db.raw("create table items (id text primary key, count bigint not null, at timestamptz not null)")) },
];
const byId = namedStatement("item_by_id", "select id, count, at from items where id = ? and count >= ?");

const { target } = testDatabases();

it("numbers the placeholders for pg and keeps the text for knex", () => {
  expect(byId.text).toBe("select id, count, at from items where id = $1 and count >= $2");
  expect(byId.sql).toBe("select id, count, at from items where id = ? and count >= ?");
  expect(byId.name).toMatch(/^item_by_id_[0-9a-f]{16}$/);
});

describe.each(["postgres", "pglite"] as const)("runNamed on %s", (kind) => {
  it("answers the rows knex answers, again and again under its name, and in a transaction sees the transaction's own rows", async () => {
    const db = await openSchema(await target(kind), "named", migrations);
    const at = new Date("2026-05-04T09:30:00Z");
    await db("items").insert({ id: "a", count: 3, at });
    const viaKnex = ((await db.raw(byId.sql, ["a", 1])) as { rows: unknown[] }).rows;
    for (let i = 0; i < 3; i++) expect(await runNamed(db, byId, ["a", 1])).toEqual(viaKnex);
    expect(viaKnex).toEqual([{ id: "a", count: 3, at }]);
    expect(await runNamed(db, byId, ["a", 4])).toEqual([]);
    await db.transaction(async (trx) => {
      await trx("items").insert({ id: "b", count: 1, at });
      expect(await runNamed(trx, byId, ["b", 0])).toEqual([{ id: "b", count: 1, at }]);
    });
    await db.destroy();
  });

  it("does not wait for a connection past the request's deadline", async () => {
    const db = await openSchema(await target(kind), "named", migrations);
    if (kind === "postgres") await expect(withDeadline(Date.now() - 1, () => runNamed(db, byId, ["a", 0]))).rejects.toMatchObject({ code: "service_unavailable" });
    else expect(await withDeadline(Date.now() + 5_000, () => runNamed(db, byId, ["a", 0]))).toEqual([]);
    await db.destroy();
  });
});

describe("runNamed's connections at hand for the rest of the turn (postgres)", () => {
  const untilNextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

  it("serves the statements of one turn on a connection acquired once, gives it back to the pool by the next turn, and refuses one whose deadline passed", async () => {
    const db = await openSchema(await target("postgres"), "named", migrations);
    const pool = (db.client as { pool: { on(event: string, listener: () => void): void; numUsed(): number } }).pool;
    let acquires = 0;
    pool.on("acquireRequest", () => acquires++);
    for (let i = 0; i < 5; i++) expect(await runNamed(db, byId, ["none", 0])).toEqual([]);
    expect(acquires).toBe(1);
    await expect(withDeadline(Date.now() - 1, () => runNamed(db, byId, ["none", 0]))).rejects.toMatchObject({ code: "service_unavailable" });
    await untilNextTurn();
    expect(pool.numUsed()).toBe(0);
    expect(await runNamed(db, byId, ["none", 0])).toEqual([]);
    expect(acquires).toBe(2);
    await db.destroy();
  });

  it("gives a connection straight back when a transaction waits for one, rather than to the next statement", async () => {
    const db = await openSchema(await target("postgres", 1), "named", migrations);
    const finished: string[] = [];
    const first = runNamed(db, byId, ["none", 0]);
    const transaction = db.transaction((trx) => trx.raw("select 1")).then(() => finished.push("transaction"));
    await first;
    await runNamed(db, byId, ["none", 0]).then(() => finished.push("next statement"));
    await transaction;
    expect(finished).toEqual(["transaction", "next statement"]);
    await db.destroy();
  });
});
