import { connectNatsBus, type Bus, type EventMessageOf, type Stoppable } from "@sched/bus";
import { openSchema, type Knex } from "@sched/db";
import { meetingEvents } from "@sched/proto";
import { startModule } from "@sched/runtime";
import { clusterServersAvailable, createTestDatabase, deleteNamespaceStreams, eventually, NATS_URL, uniqueSuffix } from "@sched/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { meetingsService } from "../src/index.js";
import { expectExactlyOncePerSequence, logger, makeChanges, withPublish } from "./harness.js";

/**
 * The outbox against the real bus: events relayed to a JetStream stream and
 * read by a durable JetStream consumer, across a relay that dies.
 */
const natsAvailable = await clusterServersAvailable();
const namespace = `o${uniqueSuffix()}`;

/** A meeting event as its consumer is handed it, its payload parsed by its declaration's schema. */
type MeetingEvent = EventMessageOf<(typeof meetingEvents)[number]>;

const ofMeetings = (messages: MeetingEvent[], ids: string[]) => messages.filter((m) => ids.includes(m.payload.meetingId));

/** Longer than one pull of the consumer: a duplicate stored by the stream would have arrived by then. */
const SETTLE_MS = 1_500;

describe.runIf(natsAvailable)("the meetings outbox on JetStream", () => {
  let database: { url: string; drop: () => Promise<void> };
  let db: Knex;
  /** The callers' and the consumer's connection. */
  let clientBus: Bus;
  /** The service's own connection, as its process would have. */
  let serviceBus: Bus;
  let service: Stoppable | undefined;
  const consumers: Stoppable[] = [];

  const startService = async (bus: Bus) => {
    service = await startModule(meetingsService, { database: { migrated: db }, bus, logger, settings: {} });
  };
  const stopService = async () => {
    await service?.stop();
    service = undefined;
  };
  const unpublished = async () => Number((await db("outbox").whereNull("published_at").count({ c: "*" }))[0]!.c);

  /** A durable JetStream consumer of the MEETINGS stream, read from its start. */
  async function consume(durable: string): Promise<MeetingEvent[]> {
    const received: MeetingEvent[] = [];
    consumers.push(await clientBus.consume({ durable, events: meetingEvents }, async (m) => void received.push(m)));
    return received;
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await openSchema({ kind: "postgres", url: database.url }, meetingsService.schema, meetingsService.migrations);
    clientBus = await connectNatsBus({ servers: NATS_URL, namespace, name: "meetings-test-client", logger });
    serviceBus = await connectNatsBus({ servers: NATS_URL, namespace, name: "meetings", logger });
  });

  afterEach(async () => {
    await stopService();
    await Promise.all(consumers.splice(0).map((c) => c.stop()));
  });

  afterAll(async () => {
    await clientBus?.close();
    await serviceBus?.close();
    await db?.destroy();
    await database?.drop();
    await deleteNamespaceStreams(NATS_URL, namespace);
  });

  it("when the relay dies after the commit and before the publish, then after a restart every event arrives exactly once per sequence number", async () => {
    // Every commit happens; no publish ever does, as if the relay died right after each commit.
    await startService(withPublish(serviceBus, async () => Promise.reject(new Error("killed before publish"))));
    const received = await consume(`outbox-killed-${uniqueSuffix()}`);
    const ids = await makeChanges(clientBus);
    await new Promise((r) => setTimeout(r, 300));
    expect(received).toEqual([]);
    expect(await unpublished()).toBe(13);

    await stopService();
    await startService(serviceBus);
    await eventually(() => received.length >= 13, 15_000);
    await eventually(async () => (await unpublished()) === 0);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    expectExactlyOncePerSequence(received, ids);
  });

  it("when the relay dies after the publish and before its mark commits, then JetStream drops the republished events by msgId", async () => {
    await startService(serviceBus);
    // The consumer reads the stream from its start, so it also sees the first test's events.
    const received = await consume(`outbox-lost-marks-${uniqueSuffix()}`);
    const ids = await makeChanges(clientBus);
    await eventually(async () => (await unpublished()) === 0, 15_000);
    await eventually(() => ofMeetings(received, ids).length >= 13, 15_000);
    await stopService();
    // The marks died with the relay's transaction: every row of this test is pending again.
    await db("outbox").update({ published_at: null });

    await startService(serviceBus);
    await eventually(async () => (await unpublished()) === 0, 15_000);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    expectExactlyOncePerSequence(ofMeetings(received, ids), ids);
    // A new durable consumer reading the whole stream finds each event stored once.
    const replay = await consume(`outbox-replay-${uniqueSuffix()}`);
    await eventually(() => ofMeetings(replay, ids).length >= 13, 15_000);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    expectExactlyOncePerSequence(ofMeetings(replay, ids), ids);
  });
});
