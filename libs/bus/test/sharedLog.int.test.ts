import { openSchema, type Knex } from "@sched/db";
import { EmbeddedDatabase } from "@sched/db/embedded";
import { EVENT_LOG_SCHEMA, eventLogMigrations, KnexEventLog } from "@sched/db/event-log";
import { createLogger } from "@sched/logging";
import { eventDef, type StreamDef } from "@sched/proto";
import { eventually } from "@sched/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { MemoryBus, type EventMessageOf } from "../src/index.js";

const logger = createLogger({ name: "shared-log-test", level: "silent" });
const stream: StreamDef = { name: "ORDERS", subjectPrefix: "orders.v1.events" };
const placed = eventDef(stream, "placed", z.object({ n: z.number() }));
const numberOf = (m: EventMessageOf<typeof placed>): number => m.payload.n;

let database: EmbeddedDatabase;
let orders: Knex;
let logDb: Knex;
let bus: MemoryBus;

/** Standalone's wiring: a service's schema and the bus's log in one embedded database, the log joining transactions. */
beforeAll(async () => {
  database = await EmbeddedDatabase.open();
  orders = await openSchema({ kind: "embedded", database }, "orders", [
    { name: "001_orders", up: async (db) => void (await db.schema.createTable("orders", (t) => t.integer("n").primary())) },
  ]);
  logDb = await openSchema({ kind: "embedded", database, joinsTransactions: true }, EVENT_LOG_SCHEMA, eventLogMigrations);
  bus = new MemoryBus(logger, new KnexEventLog(logDb));
}, 120_000);

afterAll(async () => {
  await bus?.close();
  for (const db of [orders, logDb]) await db?.destroy();
  await database?.close();
});

const storedNumbers = async () => (await logDb.withSchema(EVENT_LOG_SCHEMA).table("events").select("payload").orderBy("stream_sequence")).map((r: { payload: { n: number } }) => r.payload.n);

it("stores an event published inside a transaction holding the session with that transaction, kept or undone with it, while a publish from outside waits its turn", async () => {
  const received: number[] = [];
  const consumer = await bus.consume({ durable: "shared-log", events: [placed] }, async (m) => void received.push(numberOf(m)));
  try {
    // As an outbox relay does: a row marked and its events published, in one transaction.
    let holding!: () => void;
    let release!: () => void;
    const inTransaction = new Promise<void>((resolve) => (holding = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    const relay = orders.transaction(async (trx) => {
      await trx("orders").insert({ n: 1 });
      holding();
      await released;
      await bus.publish(placed, { n: 1 }, { msgId: "order-1" });
      await bus.publish(placed, { n: 2 }, { msgId: "order-2", after: "order-1" });
    });
    await inTransaction;
    // A publish from code holding no transaction, while the relay's holds the session: it
    // waits for the session without holding up the relay's publishes behind it.
    const outside = bus.publish(placed, { n: 3 }, { msgId: "order-3" });
    await new Promise((r) => setTimeout(r, 200));
    release();
    await relay;
    await outside;
    await expect(
      orders.transaction(async (trx) => {
        await trx("orders").insert({ n: 4 });
        await bus.publish(placed, { n: 4 }, { msgId: "order-4" });
        throw new Error("rolled back on purpose");
      }),
    ).rejects.toThrow("rolled back on purpose");
    expect(await storedNumbers()).toEqual([1, 2, 3]);
    await eventually(() => received.length === 3, 30_000, 50);
    expect(received).toEqual([1, 2, 3]);
    // Undone with its transaction, the event can be published again, as a relay retries its row.
    await bus.publish(placed, { n: 4 }, { msgId: "order-4" });
    expect(await storedNumbers()).toEqual([1, 2, 3, 4]);
  } finally {
    await consumer.stop();
  }
}, 120_000);

const shipments: StreamDef = { name: "SHIPMENTS", subjectPrefix: "shipments.v1.events" };
const shipped = eventDef(shipments, "shipped", z.object({ n: z.number() }));

it("appends a relay's batch in one insert, in order, each event once whether repeated inside the batch or stored by an earlier one", async () => {
  const log = new KnexEventLog(logDb);
  const event = (msgId: string, after?: string) => ({ stream: shipments.name, subject: shipped.subject, payload: { msgId }, headers: {}, msgId, ...(after ? { after } : {}) });
  const inserts: string[] = [];
  const count = (query: { sql: string }) => void (query.sql.includes("insert into bus.events") && inserts.push(query.sql));
  logDb.on("query", count);
  try {
    // As a relay's transaction publishes its batch: at once, each after the one before.
    await orders.transaction(async () => {
      const outcomes = await Promise.allSettled(["s-1", "s-2", "s-3"].map((msgId, i, all) => bus.publish(shipped, { n: i + 1 }, { msgId, ...(i > 0 ? { after: all[i - 1]! } : {}) })));
      expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled", "fulfilled"]);
    });
    expect(inserts).toHaveLength(1);

    const outcomes = await log.append([event("s-3"), event("s-4", "s-3"), event("s-4"), event("s-5", "s-4")]);
    expect(outcomes.map((o) => o.stored)).toEqual([false, true, false, true]);
    expect(outcomes[2]).toEqual({ stored: false, duplicate: true, lastMsgId: "s-4" });
    // Not after the stream's last event: neither it nor the event after it is stored.
    expect(await log.append([event("s-6", "s-1"), event("s-7", "s-6")])).toEqual([
      { stored: false, duplicate: false, lastMsgId: "s-5" },
      { stored: false, duplicate: false, lastMsgId: "s-5" },
    ]);
    const whole = await log.append([event("s-6", "s-5"), event("s-7", "s-6"), event("s-8", "s-7")]);
    expect(whole.every((o) => o.stored)).toBe(true);
    const positions = whole.map((o) => (o.stored ? o.streamSequence : 0));
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
  } finally {
    logDb.off("query", count);
  }
  const stored = await logDb.withSchema(EVENT_LOG_SCHEMA).table("events").where({ stream: shipments.name }).orderBy("stream_sequence").pluck("msg_id");
  expect(stored).toEqual(["s-1", "s-2", "s-3", "s-4", "s-5", "s-6", "s-7", "s-8"]);
}, 120_000);
