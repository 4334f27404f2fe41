import { createLogger } from "@sched/logging";
import { eventDef } from "@sched/proto";
import { eventually } from "@sched/testing";
import { expect, it } from "vitest";
import { z } from "zod";
import { MemoryBus, MemoryEventLog, type AppendOutcome, type NewEvent, type StoredEvent } from "../src/index.js";

const logger = createLogger({ name: "memory-bus-test", level: "silent" });
const placed = eventDef({ name: "ORDERS", subjectPrefix: "orders.v1.events" }, "placed", z.object({ n: z.number() }));

/** A log whose reads finish only when the test lets them: a slow database, made slow at a chosen moment. */
class HeldLog extends MemoryEventLog {
  reads = 0;
  private held: Promise<void> | undefined;
  release: () => void = () => {};

  hold(): void {
    this.held = new Promise((resolve) => (this.release = resolve));
  }

  override async read(position: number, subjects: ReadonlySet<string>, limit: number): Promise<StoredEvent[]> {
    const events = await super.read(position, subjects, limit);
    this.reads += 1;
    await this.held;
    return events;
  }
}

it("a consumer reading the log when an event is published reads again rather than waiting for the next publish", async () => {
  const log = new HeldLog();
  const bus = new MemoryBus(logger, log);
  log.hold();
  const seen: number[] = [];
  const consumer = await bus.consume({ durable: "orders", events: [placed] }, async (m) => void seen.push(m.payload.n));
  // The consumer's read found nothing and has not returned yet when the event is stored.
  await eventually(() => log.reads === 1 || undefined);
  await bus.publish(placed, { n: 1 }, { msgId: "order-1" });
  log.release();
  await eventually(() => seen.length === 1 || undefined);
  await consumer.stop();
  expect(seen).toEqual([1]);
});

/** A log that counts its reads. */
class CountedLog extends MemoryEventLog {
  reads = 0;

  override async read(position: number, subjects: ReadonlySet<string>, limit: number): Promise<StoredEvent[]> {
    this.reads += 1;
    return super.read(position, subjects, limit);
  }
}

it("a consumer that is up to date gets the events published next from the bus's memory, not from the log", async () => {
  const log = new CountedLog();
  const bus = new MemoryBus(logger, log);
  await bus.publish(placed, { n: 1 }, { msgId: "order-1" });
  const seen: number[] = [];
  const consumer = await bus.consume({ durable: "orders", events: [placed] }, async (m) => void seen.push(m.payload.n));
  await eventually(() => seen.length === 1 || undefined);
  const readsWhenUpToDate = log.reads;
  for (let n = 2; n <= 5; n++) await bus.publish(placed, { n }, { msgId: `order-${n}` });
  await eventually(() => seen.length === 5 || undefined);
  await consumer.stop();
  expect(seen).toEqual([1, 2, 3, 4, 5]);
  expect(log.reads).toBe(readsWhenUpToDate);
});

/** A log that records how many events each append was given. */
class BatchRecordingLog extends MemoryEventLog {
  readonly appends: number[] = [];

  override async append(events: readonly NewEvent[]): Promise<AppendOutcome[]> {
    this.appends.push(events.length);
    return super.append(events);
  }
}

it("appends the events published at once in one append, in order, each stored once, and a batch that breaks its order from that event on", async () => {
  const log = new BatchRecordingLog();
  const bus = new MemoryBus(logger, log);
  const seen: number[] = [];
  const consumer = await bus.consume({ durable: "orders", events: [placed] }, async (m) => void seen.push(m.payload.n));
  // As an outbox relay publishes its batch: all at once, each after the one before.
  const publishAll = (batch: Array<[n: number, msgId: string, after?: string]>) =>
    Promise.allSettled(batch.map(([n, msgId, after]) => bus.publish(placed, { n }, { msgId, ...(after ? { after } : {}) })));
  const statuses = (outcomes: PromiseSettledResult<void>[]) => outcomes.map((o) => (o.status === "fulfilled" ? "ok" : (o.reason as Error).name));

  expect(statuses(await publishAll([[1, "order-1"], [2, "order-2", "order-1"], [2, "order-2"], [3, "order-3", "order-2"]]))).toEqual(["ok", "ok", "ok", "ok"]);
  // A republished batch: its first two events are stored already (the last of them last in the stream), the third is new.
  expect(statuses(await publishAll([[2, "order-2"], [3, "order-3", "order-2"], [4, "order-4", "order-3"]]))).toEqual(["ok", "ok", "ok"]);
  // The stream's last event is order-4, not order-9: that event and the one after it are not stored.
  expect(statuses(await publishAll([[5, "order-5", "order-9"], [6, "order-6", "order-5"]]))).toEqual(["PublishOrderError", "PublishOrderError"]);
  expect(log.appends).toEqual([4, 3, 2]);
  expect((await log.read(0, new Set([placed.subject]), 10)).map((e) => (e.payload as { n: number }).n)).toEqual([1, 2, 3, 4]);
  await eventually(() => seen.length === 4 || undefined);
  await consumer.stop();
  expect(seen).toEqual([1, 2, 3, 4]);
  await bus.close();
});

it("is settled only once every consumer has handled every event of its subjects", async () => {
  const bus = new MemoryBus(logger, new MemoryEventLog());
  let letThrough: () => void = () => {};
  const handling = new Promise<void>((resolve) => (letThrough = resolve));
  const seen: number[] = [];
  const consumer = await bus.consume({ durable: "orders", events: [placed] }, async (m) => {
    await handling;
    seen.push(m.payload.n);
  });
  await eventually(() => bus.settled() || undefined);
  await bus.publish(placed, { n: 1 }, { msgId: "order-1" });
  expect(bus.settled()).toBe(false);
  // Still false while the handler has not finished.
  await new Promise((r) => setTimeout(r, 20));
  expect(bus.settled()).toBe(false);
  letThrough();
  await eventually(() => bus.settled() || undefined);
  expect(seen).toEqual([1]);
  await consumer.stop();
});
