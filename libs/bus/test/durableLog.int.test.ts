import { openSchema, type Knex } from "@sched/db";
import { EVENT_LOG_SCHEMA, eventLogMigrations, KnexEventLog } from "@sched/db/event-log";
import { createLogger } from "@sched/logging";
import { eventDef, type StreamDef } from "@sched/proto";
import { eventually } from "@sched/testing";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { z } from "zod";
import { MemoryBus, type EventMessageOf } from "../src/index.js";

const logger = createLogger({ name: "durable-bus-test", level: "silent" });
const stream: StreamDef = { name: "ORDERS", subjectPrefix: "orders.v1.events" };
const placed = eventDef(stream, "placed", z.object({ n: z.number() }));
const shipped = eventDef(stream, "shipped", z.object({ n: z.number() }));
const numberOf = (m: EventMessageOf<typeof placed | typeof shipped | typeof clicked>): number => m.payload.n;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A handler that never finishes: the process dies while it runs. */
const never = () => new Promise<void>(() => {});

const dataDir = mkdtempSync(join(tmpdir(), "sched-bus-"));
const opened: Knex[] = [];
afterAll(async () => {
  await Promise.all(opened.map((db) => db.destroy()));
  rmSync(dataDir, { recursive: true, force: true });
});

/** The in-process bus on the event log kept in dataDir, as standalone mode opens it. */
async function openBus(): Promise<{ bus: MemoryBus; db: Knex }> {
  const db = await openSchema({ kind: "pglite", dataDir }, EVENT_LOG_SCHEMA, eventLogMigrations);
  opened.push(db);
  return { bus: new MemoryBus(logger, new KnexEventLog(db)), db };
}

it("after a crash, a durable consumer gets every event published and not acknowledged, in order, none acknowledged, and a republished event is stored once", async () => {
  const first = await openBus();
  for (let n = 1; n <= 6; n++) await first.bus.publish(n === 5 ? shipped : placed, { n }, { msgId: `order-${n}` });

  // One consumer dies handling event 4; a batch consumer acknowledged one batch and dies handling the next.
  const handled: number[] = [];
  await first.bus.consume({ durable: "single", events: [placed, shipped] }, async (m) => {
    handled.push(numberOf(m));
    if (numberOf(m) === 4) await never();
  });
  const batches: number[][] = [];
  await first.bus.consumeBatches({ durable: "batches", events: [placed], maxBatch: 2 }, async (ms) => {
    batches.push(ms.map(numberOf));
    if (batches.length === 2) await never();
  });
  await eventually(() => (handled.includes(4) && batches.length === 2) || undefined, 20_000);
  expect(handled).toEqual([1, 2, 3, 4]);
  expect(batches).toEqual([
    [1, 2],
    [3, 4],
  ]);

  // The crash: nothing is stopped or closed; the database's files are all the next process finds.
  opened.splice(opened.indexOf(first.db), 1);
  await first.db.destroy();
  const second = await openBus();

  // The outbox relay, restarted, publishes again what it had not marked (5 and 6) and a new row (7), `after` one another.
  await Promise.all([
    second.bus.publish(shipped, { n: 5 }, { msgId: "order-5" }),
    second.bus.publish(placed, { n: 6 }, { msgId: "order-6", after: "order-5" }),
    second.bus.publish(placed, { n: 7 }, { msgId: "order-7", after: "order-6" }),
  ]);
  const resumed: number[] = [];
  const single = await second.bus.consume({ durable: "single", events: [placed, shipped] }, async (m) => void resumed.push(numberOf(m)));
  const resumedBatches: number[] = [];
  const batched = await second.bus.consumeBatches({ durable: "batches", events: [placed], maxBatch: 10 }, async (ms) => void resumedBatches.push(...ms.map(numberOf)));
  await eventually(() => (resumed.includes(7) && resumedBatches.includes(7)) || undefined, 20_000);
  // Give a duplicate the chance to show up.
  await pause(200);
  await single.stop();
  await batched.stop();

  expect(resumed).toEqual([4, 5, 6, 7]);
  expect(resumedBatches).toEqual([3, 4, 6, 7]);
  expect(await second.db("events").count({ count: "*" }).first()).toEqual({ count: 7 });
}, 60_000);

const aged: StreamDef = { name: "CLICKS", subjectPrefix: "clicks.v1.events", maxAgeMs: 300 };
const clicked = eventDef(aged, "clicked", z.object({ n: z.number() }));

it.each([
  ["kept in memory", async () => new MemoryBus(logger)],
  ["kept in the database", async () => (await openBus()).bus],
])("forgets a stream's events past its maximum age, %s, but never the stream's last, and not other streams' events", async (_where, open) => {
  const bus = await open();
  for (let n = 1; n <= 3; n++) await bus.publish(clicked, { n }, { msgId: `click-${n}` });
  await bus.publish(placed, { n: 100 }, { msgId: `kept-order-${Date.now()}` });
  await pause(400);
  await bus.publish(placed, { n: 101 }, { msgId: `kept-order-late-${Date.now()}` });

  expect(await bus.prune()).toBe(2);
  expect(await bus.prune()).toBe(0);
  // A consumer that starts now finds the stream's last event; a publish after it is still in order.
  await bus.publish(clicked, { n: 4 }, { msgId: "click-4", after: "click-3" });
  const seen: number[] = [];
  const consumer = await bus.consume({ durable: `clicks-${Date.now()}`, events: [clicked] }, async (m) => void seen.push(numberOf(m)));
  await eventually(() => seen.length >= 2 || undefined, 10_000);
  await consumer.stop();
  expect(seen).toEqual([3, 4]);
  await bus.close();
});
