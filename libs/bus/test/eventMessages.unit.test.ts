import { createLogger } from "@sched/logging";
import { eventDef } from "@sched/proto";
import { eventually } from "@sched/testing";
import { expect, it } from "vitest";
import { z } from "zod";
import { isEvent, MemoryBus, MemoryEventLog, type EventMessageOf } from "../src/index.js";

const logger = createLogger({ name: "event-messages-test", level: "silent" });
const ORDERS = { name: "ORDERS", subjectPrefix: "orders.v1.events" };
// Two events of one payload schema, and one of another: the consumer tells all three apart.
const placed = eventDef(ORDERS, "placed", z.object({ n: z.number() }));
const changed = eventDef(ORDERS, "changed", z.object({ n: z.number() }));
const shipped = eventDef(ORDERS, "shipped", z.object({ n: z.number(), carrier: z.string() }));

/** What a consumer of the three makes of each, from its payload as its declaration types it. */
function described(message: EventMessageOf<typeof placed | typeof changed | typeof shipped>): string {
  if (isEvent(message, shipped)) return `shipped ${message.payload.n} by ${message.payload.carrier}`;
  if (isEvent(message, placed)) return `placed ${message.payload.n}`;
  const rest: EventMessageOf<typeof changed> = message;
  return `changed ${rest.payload.n}`;
}

it("hands a consumer each event typed by its declaration, told apart by isEvent", async () => {
  const bus = new MemoryBus(logger);
  const seen: string[] = [];
  const single = await bus.consume({ durable: "single", events: [placed, changed, shipped] }, async (m) => void seen.push(described(m)));
  const batches: string[] = [];
  const batched = await bus.consumeBatches({ durable: "batched", events: [placed, changed, shipped], maxBatch: 10 }, async (ms) => void batches.push(...ms.map(described)));
  await bus.publish(placed, { n: 1 }, { msgId: "o-1" });
  await bus.publish(changed, { n: 1 }, { msgId: "o-2" });
  await bus.publish(shipped, { n: 1, carrier: "post" }, { msgId: "o-3" });
  const expected = ["placed 1", "changed 1", "shipped 1 by post"];
  await eventually(() => (seen.length === 3 && batches.length === 3) || undefined);
  expect(seen).toEqual(expected);
  expect(batches).toEqual(expected);
  await single.stop();
  await batched.stop();
  await bus.close();
});

it("handles a stored event that fails its declaration's schema as a failing handler: never handed over, given up after the last delivery", async () => {
  const log = new MemoryEventLog();
  const bus = new MemoryBus(logger, log);
  await log.append([{ stream: ORDERS.name, subject: shipped.subject, payload: { n: 1 }, headers: {}, msgId: "o-1" }]);
  await bus.publish(shipped, { n: 2, carrier: "post" }, { msgId: "o-2" });
  const handed: number[] = [];
  const consumer = await bus.consume({ durable: "strict", events: [shipped], backoffMs: [1], maxDeliver: 2 }, async (m) => void handed.push(m.payload.n));
  await eventually(() => handed.length === 1 || undefined);
  expect(handed).toEqual([2]);
  await consumer.stop();
  await bus.close();
});
