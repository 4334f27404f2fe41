import { openSchema, type Knex } from "@sched/db";
import type { PublicEvent } from "@sched/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimDue, insertEndpoint, lastMeetingState, listEvents, purgeOldEvents, settleAttempts } from "../src/db/queries.js";
import { meetingIdOf } from "../src/domain/publicEvent.js";
import { batchRecorder } from "../src/handlers/recording.js";
import { webhooksService } from "../src/service.js";

let db: Knex;
let next = 0;
const id = (prefix: string) => `${prefix}_${String(++next).padStart(24, "0")}`;

const event = (meetingId: string, type: PublicEvent["type"], createdAt = new Date().toISOString().replace(/\.\d{3}Z$/, "Z")): PublicEvent => ({
  id: id("evt"),
  type,
  createdAt,
  mode: "test",
  data: { object: { id: meetingId, title: "T", description: "", startTime: "2031-01-01T10:00:00Z", duration: "30 mins", participants: ["a@example.com"], status: "confirmed", organizer: "o@example.com", createdAt: "2031-01-01T09:00:00Z", attendees: [{ email: "a@example.com", response: "needsAction", respondedAt: null }] } },
});

const record = (userId: string, e: PublicEvent, source = id("src")) => batchRecorder(db)({ sourceEventId: source, userId, meetingId: meetingIdOf(e), event: e });
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
    expect(await lastMeetingState(db, "mtg_last")).toEqual(created.data.object);
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
    expect(JSON.parse(claimed[0]!.body)).toEqual(e);
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
