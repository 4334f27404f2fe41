import type { Bus, EventMessageOf, Stoppable } from "@sched/bus";
import { meetingEvents, meetingsCreate } from "@sched/proto";
import { eventually } from "@sched/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { client, created, expectExactlyOncePerSequence, hoursFromNow, makeChanges, newCaller, startMeetings, withPublish, type TestMeetings } from "./harness.js";

/** A meeting event as its consumer is handed it, its payload parsed by its declaration's schema. */
type MeetingEvent = EventMessageOf<(typeof meetingEvents)[number]>;

let h: TestMeetings | undefined;
let consumer: Stoppable | undefined;

afterEach(async () => {
  await consumer?.stop();
  await h?.close();
  consumer = undefined;
  h = undefined;
});

/** Every meeting event that reaches a durable consumer of the MEETINGS stream. */
async function consume(bus: Bus): Promise<MeetingEvent[]> {
  const received: MeetingEvent[] = [];
  consumer = await bus.consume({ durable: "meetings-test", events: meetingEvents }, async (m) => void received.push(m));
  return received;
}

const unpublished = async (t: TestMeetings) => Number((await t.db("outbox").whereNull("published_at").count({ c: "*" }))[0]!.c);

describe("meeting events", () => {
  let received: MeetingEvent[];
  beforeEach(async () => {
    h = await startMeetings();
    received = await consume(h.bus);
  });

  it("create, update and cancel publish created, updated and cancelled with sequence 1, 2, 3", async () => {
    const api = client(h!.bus);
    const alice = newCaller();
    const meeting = await created(h!.bus, alice, { startTime: hoursFromNow(24), participants: ["a@example.com", "b@example.com"] });
    const updated = await api.update(alice, meeting.id, { participants: ["b@example.com", "c@example.com"], title: "New title" });
    await api.update(alice, meeting.id, { status: "cancelled" });
    await eventually(() => received.length === 3);

    expect(received.map((m) => m.subject)).toEqual([
      "meetings.v1.events.meeting.created",
      "meetings.v1.events.meeting.updated",
      "meetings.v1.events.meeting.cancelled",
    ]);
    const [c, u, x] = received.map((m) => m.payload);
    expect(c).toMatchObject({ meetingId: meeting.id, mode: "test", organizer: { userId: alice.userId, email: alice.email }, sequence: 1, sendInvites: true, meeting });
    expect(c!.eventId).toMatch(/^evt_/);
    expect(u).toMatchObject({
      sequence: 2,
      sendInvites: true,
      changedFields: ["title", "participants"],
      previousParticipants: ["a@example.com", "b@example.com"],
      previousStatus: "confirmed",
      meeting: updated.body,
    });
    expect(x).toMatchObject({ sequence: 3, sendInvites: true, changedFields: ["status"], previousStatus: "confirmed", meeting: { status: "cancelled" } });
    expect(new Set([c!.eventId, u!.eventId, x!.eventId]).size).toBe(3);
  });

  it("drafts invite no one until confirmed; sendInvites false and status-only changes invite no one", async () => {
    const api = client(h!.bus);
    const alice = newCaller();
    const draft = await created(h!.bus, alice, { startTime: hoursFromNow(24), status: "draft" });
    await api.update(alice, draft.id, { title: "Draft title" });
    await api.update(alice, draft.id, { status: "confirmed" });
    await api.update(alice, draft.id, { description: "quiet", sendInvites: false });
    const quiet = await created(h!.bus, alice, { startTime: hoursFromNow(24), sendInvites: false });
    await eventually(() => received.length === 5);
    expect(received.map((m) => [m.payload.sequence, m.payload.sendInvites])).toEqual([
      [1, false],
      [2, false],
      [3, true],
      [4, false],
      [1, false],
    ]);
    expect(received[4]!.payload.meetingId).toBe(quiet.id);
  });

  it("a PATCH that changes nothing publishes nothing and keeps the sequence", async () => {
    const api = client(h!.bus);
    const alice = newCaller();
    const meeting = await created(h!.bus, alice, { startTime: hoursFromNow(24), title: "Same" });
    await api.update(alice, meeting.id, { title: "Same", duration: meeting.duration, participants: meeting.participants });
    await api.update(alice, meeting.id, { title: "Different" });
    await eventually(() => received.length === 2);
    expect(received.map((m) => m.payload.sequence)).toEqual([1, 2]);
  });

  it("concurrent updates of one meeting each get their own sequence number, in commit order", async () => {
    const api = client(h!.bus);
    const alice = newCaller();
    const meeting = await created(h!.bus, alice, { startTime: hoursFromNow(24) });
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => api.update(alice, meeting.id, { title: `Title ${i}` })));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    await eventually(() => received.length === 11);
    const payloads = received.map((m) => m.payload);
    expect(payloads.map((p) => p.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect((await api.get(alice, meeting.id)).body.title).toBe(payloads[10]!.meeting.title);
  });

  it("when the event cannot be recorded, then neither is the meeting nor any participant row", async () => {
    const alice = newCaller();
    await h!.db.raw("alter table outbox add constraint refuse_events check (msg_id = '') not valid");
    const answer = await client(h!.bus).create(alice, { title: "Lost", duration: "30 mins", startTime: hoursFromNow(24), participants: ["a@example.com"] });
    expect(answer.status).toBe(500);
    const count = async (table: string) => Number((await h!.db(table).count({ c: "*" }))[0]!.c);
    expect([await count("meetings"), await count("meeting_participants"), await count("outbox")]).toEqual([0, 0, 0]);
    await h!.db.raw("alter table outbox drop constraint refuse_events");
    await created(h!.bus, alice, { startTime: hoursFromNow(24) });
    await eventually(() => received.length === 1);
  });

  it("creates made at the same moment share statements, and each is stored with its participants and publishes its own created event", async () => {
    const alice = newCaller();
    const pool = h!.db.client as { acquireConnection(): Promise<unknown> };
    const acquire = pool.acquireConnection.bind(pool);
    let statements = 0;
    pool.acquireConnection = () => {
      statements++;
      return acquire();
    };
    const bodies = Array.from({ length: 20 }, (_, i) => ({ title: `Together ${i}`, duration: "30 mins", startTime: hoursFromNow(24 + i), participants: [`p${i}@example.com`, "all@example.com"] }));
    let answers: Array<{ status: number; body: { id: string; title: string } }>;
    try {
      answers = await Promise.all(bodies.map((b) => client(h!.bus).create(alice, b)));
    } finally {
      pool.acquireConnection = acquire;
    }
    expect(answers.map((a) => a.status)).toEqual(bodies.map(() => 201));
    // The first goes alone; those that arrive while it is on its way go together.
    expect(statements).toBeLessThan(bodies.length);
    const ids = answers.map((a) => a.body.id);
    for (const [i, id] of ids.entries()) expect((await client(h!.bus).get(alice, id)).body).toEqual(answers[i]!.body);
    const participants = await h!.db("meeting_participants").whereIn("meeting_id", ids).select("meeting_id", "email");
    expect(participants).toHaveLength(40);
    await eventually(() => received.length === bodies.length);
    const payloads = received.map((m) => m.payload);
    expect(new Set(payloads.map((p) => p.meetingId))).toEqual(new Set(ids));
    expect(payloads.every((p) => p.sequence === 1)).toBe(true);
  });

  it("a create refused inside a shared statement fails alone: the others are stored and published", async () => {
    const alice = newCaller();
    await h!.db.raw("alter table meetings add constraint refuse_title check (title <> 'Refused') not valid");
    const titles = Array.from({ length: 10 }, (_, i) => (i === 5 ? "Refused" : `Kept ${i}`));
    const answers = await Promise.all(titles.map((title, i) => client(h!.bus).create(alice, { title, duration: "30 mins", startTime: hoursFromNow(24 + i), participants: ["a@example.com"] })));
    expect(answers.map((a) => a.status)).toEqual(titles.map((t) => (t === "Refused" ? 500 : 201)));
    expect((await h!.db("meetings").select("title")).map((r: { title: string }) => r.title).sort()).toEqual(titles.filter((t) => t !== "Refused").sort());
    await eventually(() => received.length === 9);
    expect(Number((await h!.db("outbox").count({ c: "*" }))[0]!.c)).toBe(9);
  });

  it("a create whose request gave up while it waited behind another insert is not written; the one beside it is", async () => {
    const alice = newCaller();
    const body = (title: string, hours: number) => ({ title, duration: "30 mins", startTime: hoursFromNow(hours), participants: ["a@example.com"] });
    const locker = await h!.db.transaction();
    let first: Promise<unknown> | undefined;
    try {
      await locker.raw("lock table meetings in access exclusive mode");
      first = client(h!.bus).create(alice, body("First", 24));
      await eventually(async () => (await h!.db.raw("select 1 from pg_stat_activity where application_name = 'meetings' and wait_event_type = 'Lock'")).rowCount === 1);
      const late = h!.bus.request(meetingsCreate, { params: {}, query: {}, body: body("Late", 25) } as never, { caller: alice, timeoutMs: 300 }).then(
        () => "answered",
        () => "gave up",
      );
      const beside = client(h!.bus).create(alice, body("Beside", 26));
      expect(await late).toBe("gave up");
      await locker.commit();
      expect((await beside).status).toBe(201);
    } finally {
      if (!locker.isCompleted()) await locker.rollback();
    }
    expect(await first).toMatchObject({ status: 201 });
    expect((await h!.db("meetings").select("title")).map((r: { title: string }) => r.title).sort()).toEqual(["Beside", "First"]);
    await eventually(() => received.length === 2);
  });

  it("a refused update writes no event", async () => {
    const api = client(h!.bus);
    const alice = newCaller();
    const meeting = await created(h!.bus, alice, { startTime: hoursFromNow(24) });
    await api.update(alice, meeting.id, { status: "draft" });
    await api.update(newCaller(), meeting.id, { title: "x" });
    await eventually(() => received.length === 1);
    expect(Number((await h!.db("outbox").count({ c: "*" }))[0]!.c)).toBe(1);
  });
});

describe("the outbox across a crash", () => {
  it("when the relay dies after the commit and before the publish, then a restart publishes every event exactly once", async () => {
    // The publish never happens: the process "dies" between the commit and the publish.
    h = await startMeetings({ bus: (bus) => withPublish(bus, async () => Promise.reject(new Error("killed before publish"))) });
    const received = await consume(h.bus);
    const ids = await makeChanges(h.bus);
    await new Promise((r) => setTimeout(r, 200));
    expect(received).toEqual([]);
    expect(await unpublished(h)).toBe(13);

    await h.restart(h.bus);
    await eventually(() => received.length >= 13);
    await eventually(async () => (await unpublished(h!)) === 0);
    await new Promise((r) => setTimeout(r, 200));
    expectExactlyOncePerSequence(received, ids);
  });

  it("when the relay dies after the publish and before its mark commits, then the republished events are de-duplicated", async () => {
    h = await startMeetings();
    const received = await consume(h.bus);
    const ids = await makeChanges(h.bus);
    await eventually(async () => (await unpublished(h!)) === 0);
    await eventually(() => received.length === 13);
    await h.stopService();
    // The marks were lost with the dying transaction: every row is pending again.
    await h.db("outbox").update({ published_at: null });

    await h.restart(h.bus);
    await eventually(async () => (await unpublished(h!)) === 0);
    await new Promise((r) => setTimeout(r, 200));
    expectExactlyOncePerSequence(received, ids);
  });

  it("when the service is stopped with events pending, then the next start publishes them without any new request", async () => {
    h = await startMeetings({ bus: (bus) => withPublish(bus, async () => Promise.reject(new Error("bus down"))) });
    const received = await consume(h.bus);
    const alice = newCaller();
    const m = await created(h.bus, alice, { startTime: hoursFromNow(3) });
    await h.stopService();
    await h.restart(h.bus);
    await eventually(() => received.length === 1);
    expect(received[0]!.payload.meetingId).toBe(m.id);
  });
});
