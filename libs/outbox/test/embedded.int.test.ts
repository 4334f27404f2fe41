import { MemoryBus, type EventMessageOf } from "@sched/bus";
import { openSchema } from "@sched/db";
import { createLogger } from "@sched/logging";
import { eventDef, type StreamDef } from "@sched/proto";
import { eventually } from "@sched/testing";
import { expect, it } from "vitest";
import { z } from "zod";
import { enqueueEvent, outboxMigration, startOutboxRelay } from "../src/index.js";

const STREAM: StreamDef = { name: "OUTBOX_EMBEDDED_TEST", subjectPrefix: "outboxembedded.v1.events" };
const thingHappened = eventDef(STREAM, "thing.happened", z.object({ n: z.number().int(), label: z.string() }));

const logger = createLogger({ name: "outbox-embedded-test", level: "silent" });

// The embedded database relays through knex (the in-process bus's log joins its transaction); Postgres, in outbox.int.test.ts, on a connection of its own.
it("on an embedded database, publishes committed rows in id order with their stored payloads, and marks them published", async () => {
  const db = await openSchema({ kind: "pglite" }, "outbox_embedded", [outboxMigration("001_outbox")]);
  const bus = new MemoryBus(logger);
  const received: EventMessageOf<typeof thingHappened>[] = [];
  const consumer = await bus.consume({ durable: "embedded-test", events: [thingHappened] }, async (m) => void received.push(m));
  const relay = startOutboxRelay({ db, bus, logger, events: [thingHappened], pollMs: 50, batchSize: 7 });
  try {
    await db.transaction(async (trx) => {
      for (let n = 1; n <= 30; n++) await enqueueEvent(trx, thingHappened, { n, label: `it's "${n}"` }, `thing-${n}`);
    });
    relay.wake();
    await eventually(() => received.length >= 30);
    expect(received.map((m) => m.payload)).toEqual(Array.from({ length: 30 }, (_, i) => ({ n: i + 1, label: `it's "${i + 1}"` })));
    await eventually(async () => Number((await db("outbox").whereNull("published_at").count({ c: "*" }))[0]!.c) === 0);
  } finally {
    await relay.stop();
    await consumer.stop();
    await bus.close();
    await db.destroy();
  }
});
