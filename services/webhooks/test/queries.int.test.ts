import { openSchema, type Knex } from "@sched/db";
import { formatTimestamp, type PublicEvent } from "@sched/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimDue, insertEndpoint, lastMeetingStates, listDeliveries, listEvents, purgeOldEvents, releaseClaims, settleAttempts, type Settlement } from "../src/db/queries.js";
import { meetingIdOf } from "../src/domain/publicEvent.js";
import { recordBatch } from "../src/consumers/recording.js";
import { webhooksService } from "../src/service.js";

let db: Knex;
let next = 0;
const id = (prefix: string) => `${prefix}_${String(++next).padStart(24, "0")}`;

const event = (meetingId: string, type: PublicEvent["type"], createdAt = formatTimestamp(new Date())): PublicEvent => ({
  id: id("evt"),
  type,
  createdAt,
  mode: "test",
  data: { object: { id: meetingId, title: "T", description: "", startTime: "2031-01-01T10:00:00Z", duration: "30 mins", participants: ["a@example.com"], status: "confirmed", organizer: "o@example.com", createdAt: "2031-01-01T09:00:00Z", attendees: [{ email: "a@example.com", response: "needsAction", respondedAt: null }], recurrence: null, seriesId: null, originalStartTime: null } },
});

const record = async (userId: string, e: PublicEvent, source = id("src")) => (await recordBatch(db, [{ sourceEventId: source, userId, meetingId: meetingIdOf(e), event: e }])) === 1;
const endpoint = (userId: string, events = ["*"]) => insertEndpoint(db, { id: id("whe"), userId, mode: "test", url: "http://127.0.0.1:9/", events, description: "", sealedSecret: "sealed" });
const claim = (held = new Map<string, number>(), perEndpoint = 4) => claimDue(db, { limit: 50, perEndpoint, held, leaseMs: 30_000 });

describe("webhooks queries", () => {
  beforeAll(async () => {
    db = await openSchema({ kind: "pglite" }, webhooksService.schema, webhooksService.migrations);
  });
  afterAll(() => db.destroy());

  it("tells a meeting's last state from its meeting events, past the invite events after them", async () => {
    const created = event("mtg_last", "meeting.created");
    await record("usr_last", created);
    const invite = { meetingId: "mtg_last", email: "a@example.com", kind: "request", sequence: 1, state: "sent", channel: "email", attempts: 1, lastError: null, updatedAt: created.createdAt, response: null, respondedAt: null } as const;
    await record("usr_last", { ...created, id: id("evt"), type: "invite.sent", data: { object: invite } });
    expect((await lastMeetingStates(db, ["mtg_last", "mtg_never"])).get("mtg_last")).toEqual(created.data.object);
    expect((await lastMeetingStates(db, ["mtg_never"])).has("mtg_never")).toBe(false);
  });

  it("records an event once, with one delivery per subscribed endpoint of its user and mode", async () => {
    const all = await endpoint("usr_a");
    await endpoint("usr_a", ["meeting.deleted"]);
    await endpoint("usr_b");
    const e = event("mtg_a1", "meeting.created");
    expect(await record("usr_a", e, "src_once")).toBe(true);
    expect(await record("usr_a", { ...e, id: id("evt") }, "src_once")).toBe(false);
    const claimed = await claim();
    expect(claimed.map((c) => [c.endpoint.id, c.eventId])).toEqual([[all.id, e.id]]);
    expect(JSON.parse(claimed[0]!.body.toString())).toEqual(e);
    expect(await claim()).toEqual([]);
  });

  it("holds a meeting's later event for an endpoint until the earlier one is settled, and caps each endpoint", async () => {
    const target = await endpoint("usr_c");
    const first = event("mtg_c1", "meeting.created");
    const second = event("mtg_c1", "meeting.updated");
    await record("usr_c", first);
    await record("usr_c", second);
    for (let i = 0; i < 5; i++) await record("usr_c", event(`mtg_c${i + 2}`, "meeting.created"));
    const claimed = await claim(new Map(), 3);
    expect(claimed.map((c) => c.eventId)).toContain(first.id);
    expect(claimed.map((c) => c.eventId)).not.toContain(second.id);
    expect(claimed).toHaveLength(3);
    expect(await claim(new Map([[target.id, 4]]))).toEqual([]);
    const held = claimed.find((c) => c.eventId === first.id)!;
    const unblocked = await settleAttempts(db, [{ seq: held.seq, endpointId: target.id, attempt: 1, outcome: { at: new Date(), status: 200, error: null, durationMs: 3 }, next: { state: "delivered" } }]);
    expect(unblocked).toBe(true);
    const rest = await claim(new Map(), 10);
    expect(rest.map((c) => c.eventId)).toContain(second.id);
  });

  it("settles a batch in one write: attempts, states, last successes; disables only an endpoint with no success in it", async () => {
    const kept = await endpoint("usr_e");
    const gone = await endpoint("usr_f");
    await record("usr_e", event("mtg_e1", "meeting.created"));
    await record("usr_e", event("mtg_e2", "meeting.created"));
    await record("usr_f", event("mtg_f1", "meeting.created"));
    const claimed = (await claim()).filter((c) => [kept.id, gone.id].includes(c.endpoint.id));
    expect(claimed).toHaveLength(3);
    const [e1, e2] = claimed.filter((c) => c.endpoint.id === kept.id);
    const f1 = claimed.find((c) => c.endpoint.id === gone.id)!;
    const at = new Date("2031-01-01T10:00:00Z");
    const failed = { at, status: 503, error: "the endpoint answered 503", durationMs: 5 };
    const retryAt = new Date(Date.now() + 60_000);
    const unblocked = await settleAttempts(db, [
      { seq: e1!.seq, endpointId: kept.id, attempt: 1, outcome: { at, status: 204, error: null, durationMs: 2 }, next: { state: "delivered" } },
      { seq: e2!.seq, endpointId: kept.id, attempt: 1, outcome: failed, next: { state: "failed", disable: true } },
      { seq: f1.seq, endpointId: gone.id, attempt: 3, outcome: failed, next: { state: "failed", disable: true } },
    ]);
    expect(unblocked).toBe(false);
    const endpoints = await db("endpoints").whereIn("id", [kept.id, gone.id]).select<{ id: string; enabled: boolean; last_success_at: Date | null }[]>("id", "enabled", "last_success_at");
    expect(endpoints.find((e) => e.id === kept.id)).toMatchObject({ enabled: true, last_success_at: at });
    expect(endpoints.find((e) => e.id === gone.id)).toMatchObject({ enabled: false, last_success_at: null });
    const views = await listDeliveries(db, { ids: [e1!.id, e2!.id, f1.id] });
    expect(views.map((v) => [v.id, v.state, v.attempts.map((a) => a.status)])).toEqual(
      expect.arrayContaining([
        [e1!.id, "delivered", [204]],
        [e2!.id, "failed", [503]],
        [f1.id, "failed", [503]],
      ]),
    );

    await record("usr_e", event("mtg_e3", "meeting.created"));
    const [e3] = (await claim()).filter((c) => c.endpoint.id === kept.id);
    await settleAttempts(db, [{ seq: e3!.seq, endpointId: kept.id, attempt: 1, outcome: failed, next: { state: "pending", nextAttemptAt: retryAt } }]);
    const [retried] = await listDeliveries(db, { ids: [e3!.id] });
    expect(retried).toMatchObject({ state: "pending", nextAttemptAt: retryAt });
  });

  it("settles the rest of a batch when one delivery's endpoint was deleted meanwhile", async () => {
    const deleted = await endpoint("usr_h");
    const kept = await endpoint("usr_i");
    await record("usr_h", event("mtg_h1", "meeting.created"));
    await record("usr_i", event("mtg_i1", "meeting.created"));
    const claimed = (await claim()).filter((c) => [deleted.id, kept.id].includes(c.endpoint.id));
    expect(claimed).toHaveLength(2);
    await db("endpoints").where({ id: deleted.id }).delete();
    const outcome = { at: new Date(), status: 204, error: null, durationMs: 1 };
    await settleAttempts(db, claimed.map((c) => ({ seq: c.seq, endpointId: c.endpoint.id, attempt: 1, outcome, next: { state: "delivered" as const } })));
    const [settled] = await listDeliveries(db, { ids: claimed.filter((c) => c.endpoint.id === kept.id).map((c) => c.id) });
    expect(settled).toMatchObject({ state: "delivered", attempts: [{ status: 204 }] });
  });

  it("records a batch in one write, in its order, each event once however often the batch holds it", async () => {
    const target = await endpoint("usr_j");
    const events = [event("mtg_j1", "meeting.created"), event("mtg_j1", "meeting.updated"), event("mtg_j2", "meeting.created")];
    const records = events.map((e, i) => ({ sourceEventId: `src_j${i}`, userId: "usr_j", meetingId: meetingIdOf(e), event: e }));
    expect(await recordBatch(db, [...records, records[0]!])).toBe(3);
    expect(await recordBatch(db, records)).toBe(0);
    const stored = await db("events").where({ user_id: "usr_j" }).orderBy("seq").pluck("id");
    expect(stored).toEqual(events.map((e) => e.id));
    const owed = await db("deliveries").where({ endpoint_id: target.id }).orderBy("seq").select<{ event_seq: number }[]>("event_seq");
    expect(owed).toHaveLength(3);
  });

  it("takes a later endpoint's deliveries past another endpoint's backlog it has no room for, the earliest due first", async () => {
    const busy = await endpoint("usr_m");
    const quiet = await endpoint("usr_n");
    for (let i = 0; i < 60; i++) await record("usr_m", event(`mtg_m${i}`, "meeting.created"));
    const late = event("mtg_n1", "meeting.created");
    await record("usr_n", late);
    const mine = (claimed: Awaited<ReturnType<typeof claim>>) => claimed.filter((c) => c.endpoint.id === busy.id || c.endpoint.id === quiet.id);
    // The busy endpoint's slots are all held: its 60 earlier deliveries do not keep the quiet one's from this claim.
    const first = mine(await claim(new Map([[busy.id, 4]])));
    expect(first.map((c) => [c.endpoint.id, c.eventId])).toEqual([[quiet.id, late.id]]);
    // With room again, the busy endpoint's earliest come, as many as it has room for.
    const second = mine(await claim(new Map([[busy.id, 1]])));
    expect(second.map((c) => c.endpoint.id)).toEqual([busy.id, busy.id, busy.id]);
    const stored = await db("deliveries").whereIn("seq", second.map((c) => c.seq)).orderBy("seq").pluck("seq");
    const earliest = await db("deliveries").where({ endpoint_id: busy.id }).orderBy("seq").limit(3).pluck("seq");
    expect(stored).toEqual(earliest);
  });

  it("keeps a claimed delivery from every claim until its lease runs out", async () => {
    const target = await endpoint("usr_k");
    await record("usr_k", event("mtg_k1", "meeting.created"));
    const [taken] = (await claimDue(db, { limit: 50, perEndpoint: 4, held: new Map(), leaseMs: 300 })).filter((c) => c.endpoint.id === target.id);
    expect(taken).toBeDefined();
    expect((await claim()).filter((c) => c.endpoint.id === target.id)).toEqual([]);
    const [leased] = await listDeliveries(db, { ids: [taken!.id] });
    expect(leased!.nextAttemptAt!.getTime()).toBeGreaterThan(Date.now() - 1_000);
    const deadline = Date.now() + 30_000;
    let again: Awaited<ReturnType<typeof claim>> = [];
    while (again.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      again = (await claim()).filter((c) => c.endpoint.id === target.id);
    }
    expect(again.map((c) => c.id)).toEqual([taken!.id]);
  });

  it("lists every attempt of a retried delivery in order, the latest kept on its row, a repeated attempt once", async () => {
    const target = await endpoint("usr_l");
    await record("usr_l", event("mtg_l1", "meeting.created"));
    const [first] = (await claim()).filter((c) => c.endpoint.id === target.id);
    const at = (s: number) => new Date(Date.UTC(2031, 0, 1, 10, 0, s));
    const failed = (s: number) => ({ at: at(s), status: 503, error: "the endpoint answered 503", durationMs: s });
    const settle = (attempt: number, outcome: Settlement["outcome"], next: Settlement["next"]) =>
      settleAttempts(db, [{ seq: first!.seq, endpointId: target.id, attempt, outcome, next }]);
    await settle(1, failed(1), { state: "pending", nextAttemptAt: new Date() });
    await settle(2, failed(2), { state: "pending", nextAttemptAt: new Date() });
    await settle(2, failed(3), { state: "pending", nextAttemptAt: new Date() });
    await settle(3, { at: at(4), status: 204, error: null, durationMs: 4 }, { state: "delivered" });
    await settle(1, failed(5), { state: "pending", nextAttemptAt: new Date() });
    const [view] = await listDeliveries(db, { ids: [first!.id] });
    expect(view!.state).toBe("delivered");
    expect(view!.attempts.map((a) => [a.at.getUTCSeconds(), a.status])).toEqual([
      [1, 503],
      [3, 503],
      [4, 204],
    ]);
  });

  it("gives claimed deliveries back at once", async () => {
    const target = await endpoint("usr_g");
    await record("usr_g", event("mtg_g1", "meeting.created"));
    const [taken] = (await claim()).filter((c) => c.endpoint.id === target.id);
    expect((await claim()).filter((c) => c.endpoint.id === target.id)).toEqual([]);
    await releaseClaims(db, [taken!]);
    expect((await claim()).filter((c) => c.endpoint.id === target.id).map((c) => c.id)).toEqual([taken!.id]);
  });

  it("lists only the kept days and forgets older events", async () => {
    const old = event("mtg_d1", "meeting.created", "2020-01-01T00:00:00Z");
    const recent = event("mtg_d2", "meeting.created");
    await record("usr_d", old);
    await record("usr_d", recent);
    expect((await listEvents(db, { userId: "usr_d", mode: "test", limit: 10 })).events.map((e) => e.id)).toEqual([recent.id]);
    expect(await purgeOldEvents(db)).toBe(1);
    expect(await db("events").where({ user_id: "usr_d" }).pluck("id")).toEqual([recent.id]);
  });
});
