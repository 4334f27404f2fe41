import { openSchema, type Knex } from "@sched/db";
import { createLogger } from "@sched/logging";
import { clusterServersAvailable, createTestDatabase } from "@sched/testing";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimDue, deleteEndpoint, insertEndpoint, listDeliveries, purgeOldEvents, settleAttempts } from "../src/db/queries.js";
import { migrations } from "../src/db/migrations/index.js";
import { DeliveryWorker } from "../src/outbound/worker.js";
import { SecretCipher } from "../src/domain/secretCipher.js";
import { newSigningSecret } from "../src/domain/secrets.js";
import { recordBatch, type RecordingClaims } from "../src/consumers/recording.js";
import type { ClaimedDelivery, RecordingRoom } from "../src/db/queries.js";
import { webhooksService } from "../src/service.js";
import { createdEvent, startEventReceiver } from "./fixtures.js";

let next = 0;
const id = (prefix: string) => `${prefix}_${String(++next).padStart(24, "0")}`;

/** The owed rows of one endpoint, by delivery. */
const owed = (db: Knex, endpointId: string) =>
  db("pending_deliveries").where({ endpoint_id: endpointId }).orderBy("delivery_seq").select<{ delivery_seq: number; next_attempt_at: Date; lease_until: Date | null }[]>("delivery_seq", "next_attempt_at", "lease_until");

describe("pending deliveries", () => {
  let db: Knex;
  beforeAll(async () => {
    db = await openSchema({ kind: "pglite" }, webhooksService.schema, webhooksService.migrations);
  });
  afterAll(() => db.destroy());

  const endpointOf = (userId: string, url = "http://127.0.0.1:9/") => insertEndpoint(db, { id: id("whe"), userId, mode: "test", url, events: ["*"], description: "", sealedSecret: "sealed" });
  const record = (userId: string, n: number) => {
    const { meetingId, event } = createdEvent(n, `P ${n}`);
    return recordBatch(db, [{ sourceEventId: id("src"), userId, meetingId, event: { ...event, id: id("evt") } }]);
  };
  const claimOf = async (endpointId: string) => (await claimDue(db, { limit: 50, perEndpoint: 4, held: new Map(), leaseMs: 30_000 })).filter((c) => c.endpoint.id === endpointId);

  it("owes a recorded delivery until it settles: a settled one leaves no pending row, a retried one keeps its own, due again and unleased", async () => {
    const target = await endpointOf("usr_p1");
    await record("usr_p1", 9_001);
    await record("usr_p1", 9_002);
    expect(await owed(db, target.id)).toHaveLength(2);
    const [first, second] = await claimOf(target.id);
    expect((await owed(db, target.id)).every((row) => row.lease_until !== null)).toBe(true);
    const at = new Date();
    const retryAt = new Date(Date.now() + 60_000);
    await settleAttempts(db, [
      { seq: first!.seq, endpointId: target.id, attempt: 1, outcome: { at, status: 204, error: null, durationMs: 1 }, next: { state: "delivered" } },
      { seq: second!.seq, endpointId: target.id, attempt: 1, outcome: { at, status: 503, error: "the endpoint answered 503", durationMs: 1 }, next: { state: "pending", nextAttemptAt: retryAt } },
    ]);
    const left = await owed(db, target.id);
    expect(left).toEqual([{ delivery_seq: second!.seq, next_attempt_at: retryAt, lease_until: null }]);
    // The record listed is the delivery's own row, written in place: state, attempt and due time as before.
    const views = await listDeliveries(db, { ids: [first!.id, second!.id] });
    expect(views.map((v) => [v.id, v.state, v.nextAttemptAt, v.attempts.map((a) => a.status)])).toEqual(
      expect.arrayContaining([
        [first!.id, "delivered", null, [204]],
        [second!.id, "pending", retryAt, [503]],
      ]),
    );
  });

  it("forgets what a deleted endpoint was owed, and pending rows whose delivery is gone", async () => {
    const deleted = await endpointOf("usr_p2");
    const bypassed = await endpointOf("usr_p3");
    await record("usr_p2", 9_003);
    await record("usr_p3", 9_004);
    expect(await deleteEndpoint(db, "usr_p2", "test", deleted.id)).toBe(true);
    expect(await owed(db, deleted.id)).toEqual([]);
    // Deleted past the API: the next purge takes the pending row.
    await db("endpoints").where({ id: bypassed.id }).delete();
    expect(await owed(db, bypassed.id)).toHaveLength(1);
    await purgeOldEvents(db);
    expect(await owed(db, bypassed.id)).toEqual([]);
  });

  it("claims a batch's deliveries as it records them, a meeting's first owed event only, as far as the room held", async () => {
    const target = await endpointOf("usr_p5");
    const adopted: { claimed: readonly ClaimedDelivery[]; leftBehind: boolean }[] = [];
    const claimsWith = (free: number): RecordingClaims => ({
      reserve: (owed) => ({ free: new Map([...owed].map(([endpoint]) => [endpoint, free])), leaseMs: 30_000 }),
      adopt: (_room: RecordingRoom, claimed, leftBehind) => void adopted.push({ claimed, leftBehind }),
    });
    const batch = (ns: number[], meeting: (n: number) => number) =>
      ns.map((n) => {
        const { event } = createdEvent(n, `P ${n}`);
        const meetingId = `mtg_${String(meeting(n)).padStart(24, "0")}`;
        return { sourceEventId: id("src"), userId: "usr_p5", meetingId, event: { ...event, id: id("evt"), data: { object: { ...event.data.object, id: meetingId } } } };
      });
    // Two events of one meeting and one of another: the meeting's second waits for its first.
    const first = batch([9_020, 9_021, 9_022], (n) => (n === 9_022 ? 9_022 : 9_020));
    expect(await recordBatch(db, first, claimsWith(4))).toBe(3);
    expect(adopted[0]!.claimed.map((c) => c.eventId)).toEqual([first[0]!.event.id, first[2]!.event.id]);
    expect(adopted[0]!.leftBehind).toBe(true);
    expect(adopted[0]!.claimed[0]).toMatchObject({ endpointId: target.id, attempts: 0, body: Buffer.from(JSON.stringify(first[0]!.event)) });
    const leased = (await owed(db, target.id)).filter((row) => row.lease_until !== null);
    expect(leased.map((row) => Number(row.delivery_seq))).toEqual(adopted[0]!.claimed.map((c) => c.seq));
    // A meeting with an event owed from before is not claimed at recording; nor past the room held.
    const second = batch([9_023, 9_024, 9_025], (n) => (n === 9_023 ? 9_020 : n));
    await recordBatch(db, second, claimsWith(1));
    expect(adopted[1]!.claimed.map((c) => c.eventId)).toEqual([second[1]!.event.id]);
    expect(adopted[1]!.leftBehind).toBe(true);
  });

  it("gives a stopping worker's claimed deliveries back, unleased, to be taken at once elsewhere", { timeout: 60_000 }, async () => {
    const receiver = await startEventReceiver(300);
    const cipher = new SecretCipher(randomBytes(32));
    const endpointId = id("whe");
    await insertEndpoint(db, { id: endpointId, userId: "usr_p4", mode: "test", url: receiver.url, events: ["*"], description: "", sealedSecret: cipher.seal(newSigningSecret(), endpointId) });
    for (let n = 0; n < 4; n++) await record("usr_p4", 9_010 + n);
    const worker = new DeliveryWorker(db, cipher, createLogger({ name: "test", level: "silent" }), {
      retry: { baseMs: 1_000, maxDelayMs: 1_000, windowMs: 60_000 },
      timeoutMs: 30_000,
      allowPrivate: true,
      concurrency: 8,
      perEndpoint: 1,
      pollMs: 60_000,
    });
    try {
      worker.start();
      // One in flight, one more claimed ahead of its slot.
      const deadline = Date.now() + 20_000;
      while (receiver.received.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      expect((await owed(db, endpointId)).filter((row) => row.lease_until !== null).length).toBeGreaterThanOrEqual(1);
      await worker.stop();
      const left = await owed(db, endpointId);
      // The one in flight was delivered and settled; the rest are owed, and none is leased any more.
      expect(left.length).toBe(4 - receiver.received.length);
      expect(left.every((row) => row.lease_until === null)).toBe(true);
      expect((await claimOf(endpointId)).map((c) => c.seq).sort((a, b) => a - b)).toEqual(left.map((row) => Number(row.delivery_seq)));
    } finally {
      await worker.stop();
      await receiver.close();
    }
  });
});

describe.runIf(await clusterServersAvailable())("the pending deliveries migration", () => {
  it("carries over what was owed, leases and due times kept, and nothing of what had settled", { timeout: 60_000 }, async () => {
    const database = await createTestDatabase();
    try {
      const earlier = await openSchema({ kind: "postgres", url: database.url }, "webhooks", migrations.filter((m) => m.name < "006"));
      await earlier("endpoints").insert({ id: "whe_migrated", user_id: "usr_m", mode: "test", url: "http://127.0.0.1:9/", events: JSON.stringify(["*"]), description: "", enabled: true, sealed_secret: "sealed" });
      const [event] = await earlier("events")
        .insert({ id: "evt_migrated", source_event_id: "src_migrated", user_id: "usr_m", mode: "test", type: "meeting.created", meeting_id: "mtg_m", body: JSON.stringify({ id: "evt_migrated" }), created_at: new Date() })
        .returning<{ seq: number }[]>("seq");
      const leaseUntil = new Date(Date.now() + 600_000);
      const dueAt = new Date(Date.now() + 60_000);
      const delivery = (n: number, state: string, more: Record<string, unknown>) => ({ id: `whd_m${n}`, endpoint_id: "whe_migrated", event_seq: event!.seq, meeting_id: "mtg_m", state, ...more });
      await earlier("deliveries").insert([
        delivery(1, "delivered", { attempts: 1 }),
        delivery(2, "pending", { lease_until: leaseUntil }),
        delivery(3, "pending", { attempts: 1, next_attempt_at: dueAt }),
        delivery(4, "failed", { attempts: 9 }),
      ]);
      await earlier.destroy();
      const db = await openSchema({ kind: "postgres", url: database.url }, "webhooks", migrations);
      try {
        const rows = await db("pending_deliveries as p")
          .join("deliveries as d", "d.seq", "p.delivery_seq")
          .orderBy("d.id")
          .select<{ id: string; endpoint_id: string; meeting_id: string; event_seq: string | number; next_attempt_at: Date; lease_until: Date | null }[]>("d.id", "p.endpoint_id", "p.meeting_id", "p.event_seq", "p.next_attempt_at", "p.lease_until");
        expect(rows.map((r) => [r.id, r.endpoint_id, r.meeting_id, Number(r.event_seq), r.lease_until])).toEqual([
          ["whd_m2", "whe_migrated", "mtg_m", Number(event!.seq), leaseUntil],
          ["whd_m3", "whe_migrated", "mtg_m", Number(event!.seq), null],
        ]);
        expect(rows[1]!.next_attempt_at).toEqual(dueAt);
        // Still leased, the one is not claimed; the other waits for its due time.
        expect(await claimDue(db, { limit: 10, perEndpoint: 4, held: new Map(), leaseMs: 30_000 })).toEqual([]);
        const { rows: columns } = await db.raw<{ rows: unknown[] }>("select 1 from information_schema.columns where table_schema = 'webhooks' and table_name = 'deliveries' and column_name = 'lease_until'");
        expect(columns).toEqual([]);
      } finally {
        await db.destroy();
      }
    } finally {
      await database.drop();
    }
  });
});
