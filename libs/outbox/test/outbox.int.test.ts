import { MemoryBus, type Bus, type EventMessageOf, type Stoppable } from "@sched/bus";
import { openSchema, type Knex } from "@sched/db";
import { createLogger } from "@sched/logging";
import { eventDef, type StreamDef } from "@sched/proto";
import { createTestDatabase, eventually } from "@sched/testing";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { enqueueEvent, outboxMigration, startOutboxRelay, type OutboxRelay } from "../src/index.js";

const STREAM: StreamDef = { name: "OUTBOX_TEST", subjectPrefix: "outboxtest.v1.events" };
const thingHappened = eventDef(STREAM, "thing.happened", z.object({ n: z.number().int() }));
const otherThing = eventDef(STREAM, "other.thing", z.object({ label: z.string() }));
const unknownToRelay = eventDef(STREAM, "unknown.thing", z.object({ n: z.number() }));

const logger = createLogger({ name: "outbox-test", level: "silent" });

let database: { url: string; drop: () => Promise<void> };
let db: Knex;
let bus: MemoryBus;
let relays: OutboxRelay[];
let consumers: Stoppable[];

beforeAll(async () => {
  database = await createTestDatabase();
  db = await openSchema({ kind: "postgres", url: database.url }, "outbox_test", [outboxMigration("001_outbox")]);
});

afterAll(async () => {
  await db.destroy();
  await database.drop();
});

beforeEach(async () => {
  await db("outbox").delete();
  bus = new MemoryBus(logger);
  relays = [];
  consumers = [];
});

afterEach(async () => {
  await Promise.all(relays.map((r) => r.stop()));
  await Promise.all(consumers.map((c) => c.stop()));
  await bus.close();
});

function relay(options: { bus?: Bus; pollMs?: number; batchSize?: number; retainPublishedMs?: number } = {}): OutboxRelay {
  const r = startOutboxRelay({
    db,
    bus: options.bus ?? bus,
    logger,
    events: [thingHappened, otherThing],
    pollMs: options.pollMs ?? 50,
    ...(options.batchSize ? { batchSize: options.batchSize } : {}),
    ...(options.retainPublishedMs !== undefined ? { retainPublishedMs: options.retainPublishedMs } : {}),
  });
  relays.push(r);
  return r;
}

/** The events these tests publish, and one as their consumers are handed it. */
type TestEvent = typeof thingHappened | typeof otherThing | typeof unknownToRelay;
type Received = EventMessageOf<TestEvent>;

async function consumeAll(events: readonly TestEvent[] = [thingHappened, otherThing]): Promise<Received[]> {
  const received: Received[] = [];
  consumers.push(await bus.consume({ durable: "outbox-test", events }, async (m) => void received.push(m)));
  return received;
}

async function enqueueNumbers(from: number, to: number): Promise<void> {
  await db.transaction(async (trx) => {
    for (let n = from; n <= to; n++) await enqueueEvent(trx, thingHappened, { n }, `thing-${n}`);
  });
}

/** The numbers of the events received, in order: an event without one fails the test. */
const numbers = (messages: Received[]) =>
  messages.map(({ payload }) => {
    if (!("n" in payload)) throw new Error(`an event without a number: ${JSON.stringify(payload)}`);
    return payload.n;
  });
const unpublished = async () => Number((await db("outbox").whereNull("published_at").count({ c: "*" }))[0]!.c);

describe("enqueueEvent", () => {
  it("when the transaction rolls back, then nothing is left to publish", async () => {
    await expect(
      db.transaction(async (trx) => {
        await enqueueEvent(trx, thingHappened, { n: 1 }, "rolled-back");
        throw new Error("abort");
      }),
    ).rejects.toThrow("abort");
    expect(await db("outbox").count({ c: "*" })).toEqual([{ c: 0 }]);
  });

  it("refuses a payload its event schema rejects, and writes nothing", async () => {
    await expect(db.transaction((trx) => enqueueEvent(trx, thingHappened, { n: "one" } as never, "bad"))).rejects.toThrow();
    expect(await db("outbox").count({ c: "*" })).toEqual([{ c: 0 }]);
  });

  it("refuses a msgId that is already in the outbox", async () => {
    await enqueueNumbers(1, 1);
    await expect(db.transaction((trx) => enqueueEvent(trx, thingHappened, { n: 2 }, "thing-1"))).rejects.toMatchObject({ code: "23505" });
  });
});

describe("startOutboxRelay", () => {
  it("publishes committed rows in id order, exactly once, and marks them published", async () => {
    const received = await consumeAll();
    await enqueueNumbers(1, 120);
    relay({ batchSize: 25 });
    await eventually(() => received.length >= 120);
    expect(numbers(received)).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
    await eventually(async () => (await unpublished()) === 0);
  });

  it("when woken after a commit, then it publishes before its next poll", async () => {
    const received = await consumeAll();
    const r = relay({ pollMs: 60_000 });
    await new Promise((res) => setTimeout(res, 100));
    await db.transaction((trx) => enqueueEvent(trx, otherThing, { label: "now" }, "wake-1"));
    r.wake();
    await eventually(() => received.length === 1, 2_000);
    expect(received[0]!.payload).toEqual({ label: "now" });
  });

  it("when no one wakes it, then polling still publishes", async () => {
    const received = await consumeAll();
    relay({ pollMs: 50 });
    await enqueueNumbers(1, 3);
    await eventually(() => received.length === 3, 2_000);
  });

  it("when stopped before publishing, then a restarted relay publishes everything pending exactly once", async () => {
    const received = await consumeAll();
    await enqueueNumbers(1, 10);
    expect(await unpublished()).toBe(10);
    const first = relay();
    await first.stop();
    await enqueueNumbers(11, 20);
    relay();
    await eventually(() => received.length >= 20);
    await new Promise((res) => setTimeout(res, 200));
    expect(numbers(received)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it("when it dies after publishing but before marking, then the republished row is de-duplicated by msgId", async () => {
    const received = await consumeAll();
    await enqueueNumbers(1, 5);
    // Publishes for real, then fails as a crash right after the publish would.
    let crashes = 0;
    const crashingBus = Object.create(bus) as Bus;
    crashingBus.publish = async (def, payload, opts) => {
      await bus.publish(def, payload, opts);
      if (opts.msgId === "thing-3" && crashes === 0) {
        crashes += 1;
        throw new Error("crashed after publish");
      }
    };
    relay({ bus: crashingBus, pollMs: 20 });
    await eventually(async () => (await unpublished()) === 0);
    await new Promise((res) => setTimeout(res, 100));
    expect(crashes).toBe(1);
    expect(numbers(received)).toEqual([1, 2, 3, 4, 5]);
  });

  it("when rows it republishes are in the stream but not last, then it goes on in order at once, without a failure's backoff", async () => {
    const received = await consumeAll();
    await enqueueNumbers(1, 3);
    // A relay that died after publishing 1 and 2, before marking them; another event came after.
    await bus.publish(thingHappened, { n: 1 }, { msgId: "thing-1" });
    await bus.publish(thingHappened, { n: 2 }, { msgId: "thing-2" });
    await bus.publish(otherThing, { label: "between" }, { msgId: "other-between" });
    // A failure would wait a whole poll interval before trying again.
    relay({ pollMs: 60_000 }).wake();
    await eventually(async () => (await unpublished()) === 0, 2_000);
    await eventually(() => received.length === 4, 2_000);
    expect(received.map(({ payload }) => ("n" in payload ? payload.n : payload.label))).toEqual([1, 2, "between", 3]);
  });

  it("when the bus is down, then rows wait and are published in order once it is back", async () => {
    const received = await consumeAll();
    let down = true;
    const flakyBus = Object.create(bus) as Bus;
    flakyBus.publish = async (def, payload, opts) => {
      if (down) throw new Error("bus down");
      await bus.publish(def, payload, opts);
    };
    relay({ bus: flakyBus, pollMs: 20 });
    await enqueueNumbers(1, 4);
    await new Promise((res) => setTimeout(res, 150));
    expect(received).toEqual([]);
    expect(await unpublished()).toBe(4);
    down = false;
    await eventually(() => received.length === 4, 5_000);
    expect(numbers(received)).toEqual([1, 2, 3, 4]);
  });

  it("with several replicas relaying at once, every row is published exactly once and in order", async () => {
    const received = await consumeAll();
    const publishedBy = new Map<string, number>();
    const counting = () => {
      const b = Object.create(bus) as Bus;
      b.publish = async (def, payload, opts) => {
        publishedBy.set(opts.msgId, (publishedBy.get(opts.msgId) ?? 0) + 1);
        await bus.publish(def, payload, opts);
      };
      return b;
    };
    for (let i = 0; i < 3; i++) relay({ bus: counting(), batchSize: 7, pollMs: 10 });
    const writers = Array.from({ length: 10 }, (_, w) => enqueueNumbers(w * 20 + 1, w * 20 + 20));
    await Promise.all(writers);
    relays.forEach((r) => r.wake());
    await eventually(() => received.length >= 200, 10_000);
    await new Promise((res) => setTimeout(res, 100));
    expect(received).toHaveLength(200);
    expect([...publishedBy.values()].every((count) => count === 1)).toBe(true);
    // Order holds within what one transaction wrote (as with one meeting's changes); rows of
    // concurrent transactions interleave in commit order, which the ids need not follow.
    const got = numbers(received);
    expect([...got].sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    for (let w = 0; w < 10; w++) {
      const ofWriter = got.filter((n) => n > w * 20 && n <= w * 20 + 20);
      expect(ofWriter).toEqual(Array.from({ length: 20 }, (_, i) => w * 20 + i + 1));
    }
  });

  it("when another replica holds the lock, then its connection goes back to the pool with no transaction left open", async () => {
    // One connection: the relay's, whose activity the holder of the lock reads.
    const single = await openSchema({ kind: "postgres", url: database.url, poolMax: 1 }, "outbox_test", [outboxMigration("001_outbox")]);
    try {
      const [{ pid }] = (await single.raw<{ rows: { pid: number }[] }>("select pg_backend_pid() as pid")).rows as [{ pid: number }];
      await db.transaction(async (holder) => {
        await holder.raw("select pg_advisory_xact_lock(hashtext('outbox_test.outbox'))");
        // Read afresh each time (within a transaction Postgres otherwise answers from its first look), in ms since the
        // transaction the relay's claim runs in began: 0 when the claim began it, more when an earlier poll's was left open.
        const seen = async () => {
          await holder.raw("select pg_stat_clear_snapshot()");
          const { rows } = await holder.raw<{ rows: { query: string; opened_ms: number | null }[] }>(
            "select query, extract(epoch from query_start - xact_start) * 1000 as opened_ms from pg_stat_activity where pid = ?",
            [pid],
          );
          return rows[0]!;
        };
        relays.push(startOutboxRelay({ db: single, bus, logger, events: [thingHappened], pollMs: 10 }));
        await eventually(async () => /held_lock|^commit$/.test((await seen()).query), 10_000);
        const claims: number[] = [];
        for (let i = 0; i < 20; i++) {
          const now = await seen();
          if (now.query.includes("held_lock") && now.opened_ms !== null) claims.push(Number(now.opened_ms));
          await new Promise((r) => setTimeout(r, 15));
        }
        expect(claims.filter((ms) => ms > 5)).toEqual([]);
      });
    } finally {
      await Promise.all(relays.splice(0).map((r) => r.stop()));
      await single.destroy();
    }
  });

  it("deletes published rows once they are older than the retention, and never a pending one", async () => {
    const received = await consumeAll();
    await db.transaction((trx) => enqueueEvent(trx, unknownToRelay, { n: 0 }, "pending-forever"));
    await enqueueNumbers(1, 3);
    relay({ retainPublishedMs: 0 });
    await eventually(() => received.length === 3);
    await eventually(async () => Number((await db("outbox").count({ c: "*" }))[0]!.c) === 1);
    expect(await db("outbox").pluck("msg_id")).toEqual(["pending-forever"]);
  });

  it("leaves rows of subjects it was not given for a relay that knows them", async () => {
    const received = await consumeAll([thingHappened, otherThing, unknownToRelay]);
    await db.transaction(async (trx) => {
      await enqueueEvent(trx, unknownToRelay, { n: 0 }, "unknown-0");
      await enqueueEvent(trx, thingHappened, { n: 1 }, "thing-1");
    });
    relay();
    await eventually(() => received.length === 1);
    // The relay marks a row published after the bus took it: a consumer may see the event first.
    await eventually(async () => (await db("outbox").whereNull("published_at").pluck("msg_id")).join() === "unknown-0");
    expect(await db("outbox").whereNull("published_at").pluck("msg_id")).toEqual(["unknown-0"]);
    const knowing = startOutboxRelay({ db, bus, logger, events: [unknownToRelay], pollMs: 20 });
    relays.push(knowing);
    await eventually(() => received.length === 2);
    expect(received.map((m) => m.subject)).toEqual([thingHappened.subject, unknownToRelay.subject]);
  });
});
