import { startTcpProxy } from "@sched/testing";
import { describe, expect, it } from "vitest";
import { openSchema, type Migration } from "../src/index.js";
import { testDatabases } from "./testDatabases.js";

const migrations: Migration[] = [
  { name: "002_add_count", up: async (db) => void (await db.schema.alterTable("items", (t) => t.bigInteger("count").defaultTo(0))) },
  { name: "001_create_items", up: async (db) => void (await db.schema.createTable("items", (t) => t.text("id").primary())) },
];

const { target } = testDatabases();

describe.each(["postgres", "pglite"] as const)("openSchema on %s", (kind) => {
  it("runs migrations in name order inside the service's schema, once", async () => {
    const t = await target(kind);
    const db = await openSchema(t, "inventory", migrations);
    await db("items").insert({ id: "a", count: 2 });
    const again = await openSchema(t, "inventory", migrations);
    const tables = await db.raw("select table_name from information_schema.tables where table_schema = 'inventory' order by 1");
    expect(tables.rows.map((r: { table_name: string }) => r.table_name)).toEqual(["items", "schema_migrations", "schema_migrations_lock"]);
    await again.destroy();
    await db.destroy();
  });

  it("answers counts, updates and deletes as numbers on every driver", async () => {
    const db = await openSchema(await target(kind), "inventory", migrations);
    await db("items").insert([{ id: "a", count: 5 }, { id: "b" }]);
    expect(await db("items").count("* as n").first()).toEqual({ n: 2 });
    expect(await db("items").where({ id: "a" }).first("count")).toEqual({ count: 5 });
    expect(await db("items").where({ id: "b" }).update({ count: 1 })).toBe(1);
    expect(await db("items").where({ id: "a" }).delete()).toBe(1);
    expect(await db("items").where({ id: "zzz" }).delete()).toBe(0);
    await db.destroy();
  });
});

describe("openSchema on postgres, replicas starting together", () => {
  it("migrates once when several replicas open the same new schema at the same moment", async () => {
    const t = await target("postgres");
    const replicas = await Promise.all(Array.from({ length: 4 }, () => openSchema(t, "inventory", migrations)));
    const applied = await replicas[0]!.raw("select name from inventory.schema_migrations order by name");
    expect(applied.rows.map((r: { name: string }) => r.name)).toEqual(["001_create_items", "002_add_count"]);
    await Promise.all(replicas.map((db) => db.destroy()));
  });
});

describe("openSchema on postgres, starting before its database answers", () => {
  it("keeps trying while the database cannot be reached, and migrates once it can", async () => {
    const t = await target("postgres");
    if (t.kind !== "postgres") throw new Error("a postgres target");
    const url = new URL(t.url);
    const proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    try {
      await proxy.cut();
      const opening = openSchema({ kind: "postgres", url: proxy.via(t.url) }, "inventory", migrations);
      // Refused for a while, as a database still starting (or a machine too busy to connect in time) refuses.
      await new Promise((r) => setTimeout(r, 1_500));
      await proxy.restore();
      const db = await opening;
      const applied = await db.raw("select name from inventory.schema_migrations order by name");
      expect(applied.rows.map((r: { name: string }) => r.name)).toEqual(["001_create_items", "002_add_count"]);
      await db.destroy();
    } finally {
      await proxy.close();
    }
  });
});
