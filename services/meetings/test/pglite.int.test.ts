import type { EventMessageOf, Stoppable } from "@sched/bus";
import { meetingEvents, meetingsBusy, type Meeting } from "@sched/proto";
import { eventually } from "@sched/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, created, hoursFromNow, newCaller, startMeetings, type TestMeetings } from "./harness.js";

/** Standalone mode runs the same service on embedded Postgres: every query must work there too. */
describe("meetings on PGlite (standalone mode)", () => {
  let h: TestMeetings;
  let consumer: Stoppable;
  const received: EventMessageOf<(typeof meetingEvents)[number]>[] = [];

  beforeAll(async () => {
    h = await startMeetings({ target: "pglite" });
    consumer = await h.bus.consume({ durable: "pglite-test", events: meetingEvents }, async (m) => void received.push(m));
  });
  afterAll(async () => {
    await consumer?.stop();
    await h?.close();
  });

  it("creates, lists with a cursor, reads, updates, answers busy, replays an idempotent create and relays events", async () => {
    const api = client(h.bus);
    const alice = newCaller({ timezone: "Europe/Paris" });
    const bob = newCaller();
    const made: Meeting[] = [];
    for (let i = 0; i < 5; i++) made.push(await created(h.bus, alice, { startTime: hoursFromNow(10 + i), participants: [bob.email, "x@example.com"] }));

    const first = await api.list(alice, { limit: "2" });
    expect(first.body.data.map((m: Meeting) => m.id)).toEqual([made[0]!.id, made[1]!.id]);
    const second = await api.list(bob, { limit: "10", startingAfter: made[1]!.id });
    expect(second.body).toMatchObject({ hasMore: false });
    expect(second.body.data.map((m: Meeting) => m.id)).toEqual(made.slice(2).map((m) => m.id));

    const updated = await api.update(alice, made[0]!.id, { participants: ["x@example.com"], startTime: "2031-06-01T10:00" });
    expect(updated.body).toMatchObject({ startTime: "2031-06-01T08:00:00Z", participants: ["x@example.com"] });
    expect((await api.get(bob, made[0]!.id)).status).toBe(404);
    expect((await api.get(alice, made[0]!.id)).body).toEqual(updated.body);

    const busy = await h.bus.request(meetingsBusy, { mode: "test", users: [{ userId: alice.userId, email: alice.email }], from: "2031-06-01T00:00:00Z", to: "2031-06-02T00:00:00Z" });
    expect(busy.busy).toEqual([{ userId: alice.userId, intervals: [[Date.parse("2031-06-01T08:00:00Z") / 1_000, Date.parse("2031-06-01T08:30:00Z") / 1_000]] }]);

    const body = { title: "Once", duration: "15 mins", startTime: hoursFromNow(3), participants: ["y@example.com"] };
    const once = await api.create(alice, body, { "Idempotency-Key": "pglite-1" });
    const replay = await api.create(alice, body, { "Idempotency-Key": "pglite-1" });
    expect(replay).toEqual({ status: 201, body: once.body, headers: { "Idempotent-Replayed": "true" } });
    expect((await api.create(alice, { ...body, title: "Twice" }, { "Idempotency-Key": "pglite-1" })).status).toBe(422);

    await eventually(() => received.length === 7, 10_000);
    expect(received.map((m) => m.subject).filter((s) => s.endsWith("updated"))).toHaveLength(1);
  });
});
