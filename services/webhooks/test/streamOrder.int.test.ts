import { BatchNotReady, connectNatsBus, type Bus, type EventMessage, type Stoppable } from "@sched/bus";
import { openSchema, type Knex } from "@sched/db";
import { meetingCancelled, meetingCreated, meetingUpdated, type PayloadOf, type PublicEvent } from "@sched/proto";
import { clusterServersAvailable, createTestDatabase, deleteNamespaceStreams, eventually, NATS_URL, uniqueSuffix } from "@sched/testing";
import pg from "pg";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consumeMeetingEvents } from "../src/consumers/meetingEvents.js";
import type { RecordingClaims } from "../src/consumers/recording.js";
import { whileElected } from "../src/consumers/recorderElection.js";
import { StreamRecorder } from "../src/consumers/streamOrder.js";
import { insertEndpoint } from "../src/db/queries.js";
import { migrations } from "../src/db/migrations/index.js";

/** What the replicas logged, kept to explain a test that fails. */
const logLines: string[] = [];
const logger = pino({ level: "debug" }, { write: (line: string) => void logLines.push(line.trimEnd()) });
const USER = "usr_stream_order";

/** A replica without a delivery worker: nothing is claimed while recording. */
const noClaims: RecordingClaims = { reserve: () => ({ free: new Map(), leaseMs: 0 }), adopt: () => {} };

/** The bus as a replica sees it, its batches held up a little at random: so the replicas' recordings overlap. */
function unhurried(bus: Bus): Bus {
  const slow = Object.create(bus) as Bus;
  slow.consumeBatches = (options, handler) =>
    bus.consumeBatches(options, async (messages) => {
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 40));
      await handler(messages);
    });
  return slow;
}

const meetingId = (n: number) => `mtg_order${String(n).padStart(19, "0")}`;
const titleOf = (n: number, version: number) => `Meeting ${n} v${version}`;

function meetingAt(n: number, version: number, status: "confirmed" | "cancelled" = "confirmed") {
  return {
    id: meetingId(n),
    title: titleOf(n, version),
    description: "",
    startTime: "2031-01-01T10:00:00Z",
    duration: "30 mins" as const,
    participants: ["a@example.com"],
    status,
    organizer: "o@example.com",
    createdAt: "2031-01-01T09:00:00Z",
    attendees: [],
    recurrence: null,
    seriesId: null,
    originalStartTime: null,
  };
}

const base = (n: number, version: number, status?: "confirmed" | "cancelled") => ({
  eventId: `evt_${meetingId(n)}_${version}`,
  meetingId: meetingId(n),
  mode: "test" as const,
  organizer: { userId: USER, email: "o@example.com" },
  meeting: meetingAt(n, version, status),
  sequence: version,
  sendInvites: false,
  occurredAt: "2031-01-01T09:00:00Z",
});

/** One meeting's life, in order: created (v1), retitled twice (v2, v3), cancelled. */
async function publishLife(bus: Bus, n: number): Promise<void> {
  await bus.publish(meetingCreated, base(n, 1), { msgId: `${meetingId(n)}-1` });
  for (const version of [2, 3]) {
    const updated: PayloadOf<typeof meetingUpdated> = { ...base(n, version), changedFields: ["title"], previousStatus: "confirmed", previousParticipants: ["a@example.com"] };
    await bus.publish(meetingUpdated, updated, { msgId: `${meetingId(n)}-${version}` });
  }
  const cancelled: PayloadOf<typeof meetingCancelled> = { ...base(n, 4, "cancelled"), meeting: { ...meetingAt(n, 3, "cancelled") }, changedFields: ["status"], previousStatus: "confirmed", previousParticipants: ["a@example.com"] };
  await bus.publish(meetingCancelled, cancelled, { msgId: `${meetingId(n)}-4` });
}

/** What `endpointId` is owed, in the order it is delivered (by delivery, each meeting's events in turn), for each meeting not as it happened. */
async function outOfOrder(db: Knex, endpointId: string, meetings: number): Promise<string[]> {
  const owed = await db("deliveries as d")
    .join("events as e", "e.seq", "d.event_seq")
    .where("d.endpoint_id", endpointId)
    .orderBy("d.seq")
    .select<{ meeting_id: string; body: PublicEvent }[]>("e.meeting_id", "e.body");
  const byMeeting = new Map<string, PublicEvent[]>();
  for (const row of owed) byMeeting.set(row.meeting_id, [...(byMeeting.get(row.meeting_id) ?? []), row.body]);
  const wrong: string[] = [];
  for (let n = 0; n < meetings; n++) {
    const seen = (byMeeting.get(meetingId(n)) ?? []).map((e) => `${e.type} ${(e.data.object as { title: string }).title} ${JSON.stringify((e.data as { previous?: unknown }).previous ?? null)}`);
    const expected = [
      `meeting.created ${titleOf(n, 1)} null`,
      `meeting.updated ${titleOf(n, 2)} ${JSON.stringify({ title: titleOf(n, 1) })}`,
      `meeting.updated ${titleOf(n, 3)} ${JSON.stringify({ title: titleOf(n, 2) })}`,
      `meeting.cancelled ${titleOf(n, 3)} ${JSON.stringify({ status: "confirmed" })}`,
    ];
    if (JSON.stringify(seen) !== JSON.stringify(expected)) wrong.push(`${meetingId(n)}: ${seen.join(" | ")}`);
  }
  return wrong;
}

/** Publishes `meetings` lives, meetings in parallel and each one's events in its order: the stream interleaves them. */
async function publishLives(bus: Bus, meetings: number, from = 0): Promise<void> {
  const lives = Array.from({ length: meetings }, (_, n) => from + n);
  for (let i = 0; i < lives.length; i += 25) await Promise.all(lives.slice(i, i + 25).map((n) => publishLife(bus, n)));
}

const recordedCount = async (db: Knex) => Number((await db("events").count<{ count: string }[]>({ count: "*" }))[0]!.count);

describe.runIf(await clusterServersAvailable())("meeting events recorded by two replicas of one durable", () => {
  let database: { url: string; drop: () => Promise<void> };
  let db: Knex;
  const namespaces: string[] = [];
  const buses: Bus[] = [];
  const running: Stoppable[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    for (const r of running) await r.stop();
    for (const b of buses) await b.close();
    await db?.destroy();
    await database?.drop();
    for (const ns of namespaces) await deleteNamespaceStreams(NATS_URL, ns);
  });

  /** A fresh webhooks schema, an endpoint taking every event of the meetings' organizer, and three buses on a namespace of their own: a publisher's and two replicas'. */
  async function setUp(tag: string): Promise<{ endpointId: string; publisher: Bus; replicas: [Bus, Bus] }> {
    await db?.destroy();
    db = await openSchema({ kind: "postgres", url: database.url }, `webhooks_${tag}`, migrations);
    const namespace = `whorder${tag}${uniqueSuffix()}`;
    namespaces.push(namespace);
    const connected: Bus[] = [];
    for (let i = 0; i < 3; i++) connected.push(await connectNatsBus({ servers: NATS_URL, namespace, name: `webhooks-order-${i}`, logger }));
    buses.push(...connected);
    const endpoint = await insertEndpoint(db, { id: `whe_${tag}`.padEnd(28, "0"), userId: USER, mode: "test", url: "http://127.0.0.1:9/", events: ["*"], description: "", sealedSecret: "sealed" });
    return { endpointId: endpoint.id, publisher: connected[0]!, replicas: [connected[1]!, connected[2]!] };
  }

  it("records each meeting's events in stream order, each update's previous values from the event before it, though both replicas consume at once", { timeout: 120_000 }, async () => {
    const meetings = 40;
    const { endpointId, publisher, replicas } = await setUp("both");
    // The durable exists before the burst, so both replicas pull from its start, JetStream handing each part of it.
    for (const replica of replicas) running.push(await consumeMeetingEvents(unhurried(replica), db, logger, noClaims));
    await publishLives(publisher, meetings);
    await eventually(async () => (await recordedCount(db)) === meetings * 4, 60_000, 100);
    expect(await outOfOrder(db, endpointId, meetings)).toEqual([]);
  });

  it("records on the elected replica only, and after a handover goes on in order", { timeout: 120_000 }, async () => {
    const meetings = 150;
    const { endpointId, publisher, replicas } = await setUp("elected");
    const elect = (replica: Bus) => whileElected(db, `order test ${endpointId}`, logger, () => consumeMeetingEvents(unhurried(replica), db, logger, noClaims), 100);
    const first = await elect(replicas[0]);
    running.push(first);
    await publishLives(publisher, meetings / 2);
    // Recording, the first replica holds the lock; the second stands by, then takes over mid-stream when the first steps down.
    await eventually(async () => (await recordedCount(db)) > 0, 30_000, 20).catch((err: unknown) => {
      throw new Error(`the elected replica recorded nothing; the replicas logged:\n${logLines.slice(-40).join("\n")}`, { cause: err });
    });
    const second = await elect(replicas[1]);
    running.push(second);
    const publishing = publishLives(publisher, meetings / 2, meetings / 2);
    await first.stop();
    await publishing;
    await eventually(async () => (await recordedCount(db)) === meetings * 4, 60_000, 100);
    expect(await outOfOrder(db, endpointId, meetings)).toEqual([]);
    await second.stop();
  });
});

/** The `n`th meeting's create, as the bus hands it at `streamSequence`. */
const createdAt = (n: number, streamSequence: number): EventMessage => ({ subject: meetingCreated.subject, payload: base(n, 1), deliveryCount: 1, streamSequence, follows: streamSequence - 1, headers: {} });
const recordsOf = async (_db: Knex, messages: readonly EventMessage[]) =>
  messages.map((m) => {
    const payload = m.payload as ReturnType<typeof base>;
    return { sourceEventId: payload.eventId, userId: USER, meetingId: payload.meetingId, event: { id: `evt_pos_${m.streamSequence}`, type: "meeting.created" as const, createdAt: payload.occurredAt, mode: "test" as const, data: { object: payload.meeting } } };
  });
const positionOf = async (db: Knex, consumer: string) => {
  const { rows } = await db.raw<{ rows: { recorded_through: string }[] }>("select recorded_through from consumer_positions where consumer = ?", [consumer]);
  return rows[0] === undefined ? undefined : Number(rows[0].recorded_through);
};

describe("a consumer's recorded position (Postgres)", () => {
  let db: Knex;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    database = await createTestDatabase();
    db = await openSchema({ kind: "postgres", url: database.url }, "webhooks", migrations);
  });
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it("records what follows it, skips what it has passed, and holds back what comes after a gap until the gap is waited out", async () => {
    const recorder = new StreamRecorder(db, "position-test", logger, undefined, 60_000);
    expect(await recorder.record([createdAt(1001, 1), createdAt(1002, 2)], recordsOf)).toBe(2);
    // A redelivery, and the next event with it: only the next is recorded.
    expect(await recorder.record([createdAt(1002, 2), createdAt(1003, 3)], recordsOf)).toBe(1);
    // Sequence 4 is another replica's: the batch waits in hand, then asks for a retry.
    await expect(recorder.record([createdAt(1005, 5)], recordsOf)).rejects.toBeInstanceOf(BatchNotReady);
    expect(await recorder.record([createdAt(1004, 4), createdAt(1005, 5)], recordsOf)).toBe(2);
    // Events before a batch that never come (removed from the stream): recording goes on once the gap has been waited out.
    const patient = new StreamRecorder(db, "position-test", logger, undefined, 100);
    expect(await patient.record([createdAt(1009, 9)], recordsOf)).toBe(1);
    expect(await positionOf(db, "position-test")).toBe(9);
  });

  it("keeps the position it read through a batch wholly redelivered: the next batch reads it no more", async () => {
    // Sequences past the other tests' (the events' ids are made from them); the position starts at 200.
    await db.raw("insert into consumer_positions (consumer, recorded_through) values ('redelivered-test', 200)");
    const recorder = new StreamRecorder(db, "redelivered-test", logger, undefined, 60_000);
    expect(await recorder.record([createdAt(4001, 201), createdAt(4002, 202)], recordsOf)).toBe(2);
    const reads: string[] = [];
    const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
    pg.Client.prototype.query = function watched(this: pg.Client, ...args: unknown[]) {
      const first = args[0] as string | { text?: string } | undefined;
      const text = typeof first === "string" ? first : (first?.text ?? "");
      if (text.includes("select recorded_through from consumer_positions")) reads.push(text);
      return query.apply(this, args);
    } as typeof pg.Client.prototype.query;
    try {
      expect(await recorder.record([createdAt(4001, 201), createdAt(4002, 202)], recordsOf)).toBe(0);
      expect(await recorder.record([createdAt(4003, 203)], recordsOf)).toBe(1);
    } finally {
      pg.Client.prototype.query = query as typeof pg.Client.prototype.query;
    }
    expect(reads).toEqual([]);
    expect(await positionOf(db, "redelivered-test")).toBe(203);
  });

  it("records nothing on a position another replica moved since, and goes on from where that one stopped", async () => {
    // Sequences past the other tests' (the events' ids are made from them); the position starts at 100.
    await db.raw("insert into consumer_positions (consumer, recorded_through) values ('overtaken-test', 100)");
    const elected = new StreamRecorder(db, "overtaken-test", logger, undefined, 60_000);
    const other = new StreamRecorder(db, "overtaken-test", logger, undefined, 60_000);
    expect(await elected.record([createdAt(3001, 101), createdAt(3002, 102)], recordsOf)).toBe(2);
    // The other replica records sequence 103 while the elected one still takes the position to be 102.
    expect(await other.record([createdAt(3003, 103)], recordsOf)).toBe(1);
    // Its batch from 103 on (another event stands at 103, so that recording it again would show): only 104 is recorded.
    expect(await elected.record([createdAt(3013, 103), createdAt(3004, 104)], recordsOf)).toBe(1);
    expect(await positionOf(db, "overtaken-test")).toBe(104);
    const { rows } = await db.raw<{ rows: { meeting_id: string }[] }>("select meeting_id from events where meeting_id = any(?) order by seq", [[3001, 3002, 3003, 3013, 3004].map(meetingId)]);
    expect(rows.map((r) => r.meeting_id)).toEqual([3001, 3002, 3003, 3004].map(meetingId));
  });
});

describe("recording on the embedded database (one process, nothing to elect)", () => {
  let db: Knex;
  beforeAll(async () => {
    db = await openSchema({ kind: "pglite" }, "webhooks", migrations);
  });
  afterAll(() => db.destroy());

  it("records each batch as it comes, a redelivered event once, with no position kept", async () => {
    const recorder = new StreamRecorder(db, "embedded-test", logger, undefined, 60_000);
    expect(await recorder.record([createdAt(2001, 1), createdAt(2002, 2)], recordsOf)).toBe(2);
    expect(await recorder.record([createdAt(2002, 2), createdAt(2003, 3)], recordsOf)).toBe(1);
    // The one consumer hands batches over in order: a batch after a gap is not held back.
    expect(await recorder.record([createdAt(2005, 5)], recordsOf)).toBe(1);
    expect(await positionOf(db, "embedded-test")).toBeUndefined();
  });

  it("runs the consumers at once, without an election", async () => {
    let started = 0;
    const consumers = await whileElected(db, "embedded election", logger, async () => {
      started += 1;
      return { stop: async () => {} };
    });
    expect(started).toBe(1);
    await consumers.stop();
  });
});
