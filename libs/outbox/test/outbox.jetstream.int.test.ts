import { connectNatsBus, type Bus, type EventMessageOf, type Stoppable } from "@sched/bus";
import { openSchema, type Knex } from "@sched/db";
import { createLogger } from "@sched/logging";
import { eventDef, type StreamDef } from "@sched/proto";
import { clusterServersAvailable, createTestDatabase, deleteNamespaceStreams, eventually, NATS_URL, uniqueSuffix } from "@sched/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { enqueueEvent, outboxMigration, startOutboxRelay, type OutboxRelay } from "../src/index.js";

const STREAM: StreamDef = { name: "OUTBOX_TEST", subjectPrefix: "outboxtest.v1.events" };
const thingHappened = eventDef(STREAM, "thing.happened", z.object({ n: z.number().int() }));

const logger = createLogger({ name: "outbox-jetstream-test", level: "silent" });
const natsAvailable = await clusterServersAvailable();
const namespace = `x${uniqueSuffix()}`;
/** Longer than one pull of the consumer: a duplicate stored by the stream would have arrived by then. */
const SETTLE_MS = 1_500;

describe.runIf(natsAvailable)("the outbox relay on JetStream", () => {
  let database: { url: string; drop: () => Promise<void> };
  let db: Knex;
  let bus: Bus;
  let relays: OutboxRelay[] = [];
  let consumers: Stoppable[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await openSchema({ kind: "postgres", url: database.url }, "outbox_test", [outboxMigration("001_outbox")]);
    bus = await connectNatsBus({ servers: NATS_URL, namespace, name: "outbox-test", logger });
  });

  afterEach(async () => {
    await Promise.all(relays.map((r) => r.stop()));
    await Promise.all(consumers.map((c) => c.stop()));
    relays = [];
    consumers = [];
  });

  afterAll(async () => {
    await bus?.close();
    await db?.destroy();
    await database?.drop();
    await deleteNamespaceStreams(NATS_URL, namespace);
  });

  const relay = (through: Bus) => {
    const r = startOutboxRelay({ db, bus: through, logger, events: [thingHappened], pollMs: 20 });
    relays.push(r);
    return r;
  };
  const unpublished = async () => Number((await db("outbox").whereNull("published_at").count({ c: "*" }))[0]!.c);
  const numbers = (messages: EventMessageOf<typeof thingHappened>[], from: number, to: number) => messages.map((m) => m.payload.n).filter((n) => n >= from && n <= to);

  async function consume(durable: string): Promise<EventMessageOf<typeof thingHappened>[]> {
    const received: EventMessageOf<typeof thingHappened>[] = [];
    consumers.push(await bus.consume({ durable, events: [thingHappened] }, async (m) => void received.push(m)));
    return received;
  }

  async function enqueueNumbers(from: number, to: number): Promise<void> {
    await db.transaction(async (trx) => {
      for (let n = from; n <= to; n++) await enqueueEvent(trx, thingHappened, { n }, `thing-${n}`);
    });
  }

  it("when it dies after a publish and before the mark, then the republished event is stored once", async () => {
    const received = await consume(`crash-${uniqueSuffix()}`);
    await enqueueNumbers(1, 5);
    let crashes = 0;
    const crashing = Object.create(bus) as Bus;
    // The relay publishes the rows' stored text.
    crashing.publishStored = async (def, json, opts) => {
      await bus.publishStored(def, json, opts);
      if (opts.msgId === "thing-3" && crashes === 0) {
        crashes += 1;
        throw new Error("crashed after publish");
      }
    };
    relay(crashing);
    await eventually(async () => (await unpublished()) === 0, 10_000);
    await eventually(() => received.length >= 5, 10_000);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    expect(crashes).toBe(1);
    expect(numbers(received, 1, 5)).toEqual([1, 2, 3, 4, 5]);
  });

  it("when every mark is lost, then a restarted relay republishes all and a durable consumer still sees each once, in order", async () => {
    const received = await consume(`lost-${uniqueSuffix()}`);
    await enqueueNumbers(101, 120);
    const first = relay(bus);
    await eventually(async () => (await unpublished()) === 0, 10_000);
    await first.stop();
    await db("outbox").update({ published_at: null });
    relay(bus);
    await eventually(async () => (await unpublished()) === 0, 10_000);
    await eventually(() => numbers(received, 101, 120).length >= 20, 10_000);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    expect(numbers(received, 101, 120)).toEqual(Array.from({ length: 20 }, (_, i) => 101 + i));
  });
});
