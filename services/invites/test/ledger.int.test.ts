import { openSchema, type Knex } from "@sched/db";
import { formatTimestamp, inviteFailed, inviteSent, type Meeting } from "@sched/proto";
import { createTestDatabase } from "@sched/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { beginSending, claimDueChanges, finishChange, latestDeliveries, nextDueAt, pendingDeliveries, PREDECESSOR_GRACE_SECONDS, recordChanges, renewLease, scheduleRetry, settleDeliveries, settleUnsent } from "../src/db/queries.js";
import { settlementId } from "../src/domain/inviteEvents.js";
import type { MeetingChange, PlannedDelivery } from "../src/domain/plan.js";
import { invitesService } from "../src/index.js";

let seq = 0;
function change(sequence: number, meetingId = `mtg_ledger${String(++seq).padStart(16, "0")}`, mode: "test" | "live" = "live"): MeetingChange {
  const meeting: Meeting = { id: meetingId, title: "T", description: "", startTime: "2031-01-01T10:00:00Z", duration: "30 mins", participants: ["a@example.com"], status: "confirmed", organizer: "o@example.com", createdAt: "2030-01-01T00:00:00Z", attendees: [], recurrence: null, seriesId: null, originalStartTime: null };
  return { meetingId, sequence, mode, organizer: { userId: "usr_1", email: "o@example.com" }, meeting };
}

describe("the delivery ledger (Postgres)", () => {
  let db: Knex;
  const recordChange = async (db: Knex, change: MeetingChange, planned: PlannedDelivery[]) => {
    const [recorded] = await recordChanges(db, [{ change, planned, traceContext: null }]);
    return { added: recorded!.added, channel: recorded!.channel };
  };
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    db = await openSchema({ kind: "postgres", url: database.url, poolMax: 4 }, invitesService.schema, invitesService.migrations);
  });
  afterAll(async () => {
    await db?.destroy();
    await drop?.();
  });

  it("records a change once: the same event again adds no row", async () => {
    const c = change(1);
    const planned = [{ email: "a@example.com", kind: "request" as const }, { email: "b@example.com", kind: "request" as const }];
    expect((await recordChange(db, c, planned)).added).toBe(2);
    expect((await recordChange(db, c, planned)).added).toBe(0);
    expect((await latestDeliveries(db, c.meetingId)).map((d) => [d.email, d.state])).toEqual([
      ["a@example.com", "pending"],
      ["b@example.com", "pending"],
    ]);
  });

  it("records the change itself, and its deliveries through Google only while the organizer has an active Google connection", async () => {
    const viaEmail = change(1);
    expect(await recordChange(db, viaEmail, [{ email: "a@example.com", kind: "request" }])).toEqual({ added: 1, channel: "email" });
    const stored = await db("meeting_changes").where({ meeting_id: viaEmail.meetingId }).first();
    expect([stored.mode, stored.organizer_user_id, stored.organizer_email, stored.state, stored.meeting]).toEqual(["live", "usr_1", "o@example.com", "pending", viaEmail.meeting]);

    const connection = { id: "cal_ledger0000000000000000", user_id: "usr_1", provider: "google", sealed_tokens: "sealed", status: "active" };
    await db("calendar_connections").insert(connection);
    const viaGoogle = change(1);
    expect(await recordChange(db, viaGoogle, [{ email: "a@example.com", kind: "request" }, { email: "b@example.com", kind: "cancel" }])).toEqual({ added: 2, channel: "google" });
    expect((await latestDeliveries(db, viaGoogle.meetingId)).map((d) => [d.email, d.kind, d.channel])).toEqual([
      ["a@example.com", "request", "google"],
      ["b@example.com", "cancel", "google"],
    ]);

    await db("calendar_connections").where({ id: connection.id }).update({ status: "broken" });
    expect((await recordChange(db, change(1), [{ email: "a@example.com", kind: "request" }])).channel).toBe("email");
    await db("calendar_connections").where({ id: connection.id }).delete();
  });

  it("records test-mode changes as simulated, each with its test invite.sent event once, and never hands them to a worker", async () => {
    const c = change(1, undefined, "test");
    await recordChange(db, c, [{ email: "a@example.com", kind: "request" }]);
    await recordChanges(db, [{ change: c, planned: [{ email: "a@example.com", kind: "request" }], traceContext: null }]);
    const [simulated] = await latestDeliveries(db, c.meetingId);
    expect(simulated!.state).toBe("simulated");
    const outbox = await db("outbox").whereRaw("payload->>'meetingId' = ?", [c.meetingId]).select("subject", "payload");
    expect(outbox).toEqual([{ subject: inviteSent.subject, payload: expect.anything() }]);
    // The payload spelled in SQL is the one the bus contract checks.
    expect(inviteSent.payload.parse(outbox[0]!.payload)).toEqual({
      eventId: settlementId({ state: "simulated", meetingId: c.meetingId, sequence: 1, kind: "request", email: "a@example.com" }),
      meetingId: c.meetingId,
      mode: "test",
      organizer: { userId: "usr_1", email: "o@example.com" },
      invite: { meetingId: c.meetingId, email: "a@example.com", kind: "request", sequence: 1, state: "simulated", channel: "email", attempts: 0, lastError: null, updatedAt: formatTimestamp(simulated!.updatedAt) },
      occurredAt: formatTimestamp(simulated!.updatedAt),
    });
    const claimed = await claimDueChanges(db, "w", 100, 60_000);
    expect(claimed.map((x) => x.meetingId)).not.toContain(c.meetingId);
    for (const x of claimed) await finishChange(db, x, "w", "done");
  });

  it("hands out a meeting's changes in order, and a later one only once the earlier is settled", async () => {
    const first = change(1);
    const second = change(2, first.meetingId);
    await recordChange(db, second, [{ email: "a@example.com", kind: "request" }]);
    await recordChange(db, first, [{ email: "a@example.com", kind: "request" }]);
    const round1 = (await claimDueChanges(db, "w", 100, 60_000)).filter((x) => x.meetingId === first.meetingId);
    expect(round1.map((x) => x.sequence)).toEqual([1]);
    await scheduleRetry(db, round1[0]!, "w", 0, "try again");
    const round2 = (await claimDueChanges(db, "w", 100, 60_000)).filter((x) => x.meetingId === first.meetingId);
    expect(round2.map((x) => [x.sequence, x.attempts])).toEqual([[1, 2]]);
    await finishChange(db, round2[0]!, "w", "done");
    const round3 = (await claimDueChanges(db, "w", 100, 60_000)).filter((x) => x.meetingId === first.meetingId);
    expect(round3.map((x) => x.sequence)).toEqual([2]);
    await finishChange(db, round3[0]!, "w", "done");
  });

  it("gives a change whose worker stopped answering to another once the lease runs out; the first cannot renew it", async () => {
    const c = change(1);
    await recordChange(db, c, [{ email: "a@example.com", kind: "request" }]);
    const mine = (await claimDueChanges(db, "worker-a", 100, 150)).filter((x) => x.meetingId === c.meetingId);
    expect(mine).toHaveLength(1);
    expect((await claimDueChanges(db, "worker-b", 100, 60_000)).filter((x) => x.meetingId === c.meetingId)).toEqual([]);
    expect(await renewLease(db, c, "worker-a", 150)).toBe(true);
    expect(await renewLease(db, c, "worker-b", 150)).toBe(false);
    await new Promise((r) => setTimeout(r, 300));
    const taken = (await claimDueChanges(db, "worker-b", 100, 60_000)).filter((x) => x.meetingId === c.meetingId);
    expect(taken.map((x) => x.attempts)).toEqual([2]);
    expect(await renewLease(db, c, "worker-a", 150)).toBe(false);
    expect(await renewLease(db, c, "worker-b", 150)).toBe(true);
    // The first worker, back late, can neither settle the change nor hand it back to the queue.
    expect(await finishChange(db, c, "worker-a", "done")).toBe(false);
    expect(await scheduleRetry(db, c, "worker-a", 0, "late")).toBe(false);
    expect(await finishChange(db, c, "worker-b", "done")).toBe(true);
  });

  it("marks a delivery as being sent only under the lease and only as it was read, and records the outcome only for the attempt that marked it", async () => {
    const c = change(1);
    await recordChange(db, c, [{ email: "a@example.com", kind: "request" }]);
    expect((await claimDueChanges(db, "worker-a", 100, 60_000)).filter((x) => x.meetingId === c.meetingId)).toHaveLength(1);
    const [read] = await pendingDeliveries(db, c);
    expect(read).toMatchObject({ sendingAttempt: null, sendingPresumedLost: false });
    expect(await beginSending(db, c, "worker-b", 60_000, [read!], "attempt-b")).toEqual({ leased: false, marked: 0 });
    expect(await beginSending(db, c, "worker-a", 60_000, [read!], "attempt-1")).toEqual({ leased: true, marked: 1 });
    // Read before the mark: a second attempt cannot take it.
    expect(await beginSending(db, c, "worker-a", 60_000, [read!], "attempt-2")).toEqual({ leased: true, marked: 0 });
    expect(await pendingDeliveries(db, c)).toEqual([expect.objectContaining({ sendingAttempt: "attempt-1", sendingPresumedLost: false })]);

    await settleDeliveries(db, c, [read!], { state: "sent", channel: "email", attempts: 1 }, "attempt-2");
    expect(await pendingDeliveries(db, c)).toHaveLength(1);
    await settleDeliveries(db, c, [read!], { state: "sent", channel: "email", attempts: 1 }, "attempt-1");
    expect(await pendingDeliveries(db, c)).toEqual([]);
    expect(await db("deliveries").where({ meeting_id: c.meetingId }).first()).toMatchObject({ state: "sent", sending_attempt: null, sending_since: null });
    // The settlement's event was written with it, once: the refused attempt wrote none.
    const outbox = await db("outbox").whereRaw("payload->>'meetingId' = ?", [c.meetingId]).select("subject", "payload", "msg_id");
    expect(outbox).toEqual([
      {
        subject: inviteSent.subject,
        msg_id: settlementId({ state: "sent", meetingId: c.meetingId, sequence: 1, kind: "request", email: "a@example.com" }),
        payload: expect.objectContaining({ meetingId: c.meetingId, mode: c.mode, invite: expect.objectContaining({ meetingId: c.meetingId, email: "a@example.com", state: "sent", channel: "email" }) }),
      },
    ]);
    expect(await finishChange(db, c, "worker-a", "done")).toBe(true);
  });

  it("gives up unsent deliveries as failed, each with one invite.failed event; one still to retry writes none", async () => {
    const c = change(1);
    await recordChange(db, c, [{ email: "a@example.com", kind: "request" }, { email: "b@example.com", kind: "request" }]);
    expect((await claimDueChanges(db, "worker-f", 100, 60_000)).filter((x) => x.meetingId === c.meetingId)).toHaveLength(1);
    const outbox = () => db("outbox").whereRaw("payload->>'meetingId' = ?", [c.meetingId]).orderBy("id").select("subject", "payload");
    expect(await settleUnsent(db, c, "attempt-1", { state: "pending", channel: "email", attempts: 1, error: "421 try later" })).toBe(2);
    expect(await outbox()).toEqual([]);
    expect(await settleUnsent(db, c, "attempt-2", { state: "failed", channel: "email", attempts: 2, error: "550 refused" })).toBe(2);
    expect(await settleUnsent(db, c, "attempt-3", { state: "failed", channel: "email", attempts: 3, error: "550 refused" })).toBe(0);
    const events = await outbox();
    expect(events.map((e) => [e.subject, e.payload.invite.email, e.payload.invite.state, e.payload.invite.lastError])).toEqual([
      [inviteFailed.subject, "a@example.com", "failed", "550 refused"],
      [inviteFailed.subject, "b@example.com", "failed", "550 refused"],
    ]);
    for (const e of events) expect(inviteFailed.payload.parse(e.payload)).toEqual(e.payload);
    expect(await finishChange(db, c, "worker-f", "failed", "550 refused")).toBe(true);
  });

  it("records a batch of changes in one statement: each its own channel, mode, trace context and count, in the order given", async () => {
    const connection = { id: "cal_ledgerbatch00000000000", user_id: "usr_google", provider: "google", sealed_tokens: "sealed", status: "active" };
    await db("calendar_connections").insert(connection);
    const viaEmail = change(1);
    const viaGoogle = { ...change(1), organizer: { userId: "usr_google", email: "G@Example.com" } };
    const simulated = change(1, undefined, "test");
    const traced = { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" };
    const results = await recordChanges(db, [
      { change: viaGoogle, planned: [{ email: "a@example.com", kind: "request" }, { email: "b@example.com", kind: "request" }], traceContext: traced },
      { change: viaEmail, planned: [{ email: "a@example.com", kind: "request" }], traceContext: null },
      { change: simulated, planned: [{ email: "c@example.com", kind: "request" }, { email: "d@example.com", kind: "cancel" }], traceContext: null },
    ]);
    expect(results).toEqual([
      { meetingId: viaGoogle.meetingId, sequence: 1, mode: "live", added: 2, channel: "google" },
      { meetingId: viaEmail.meetingId, sequence: 1, mode: "live", added: 1, channel: "email" },
      { meetingId: simulated.meetingId, sequence: 1, mode: "test", added: 2, channel: "email" },
    ]);
    const stored = await db("meeting_changes").whereIn("meeting_id", [viaGoogle.meetingId, viaEmail.meetingId, simulated.meetingId]).orderBy("meeting_id");
    const byMeeting = new Map(stored.map((row) => [row.meeting_id, row]));
    expect(byMeeting.get(viaGoogle.meetingId)).toMatchObject({ state: "pending", organizer_email: "g@example.com", trace_context: traced });
    expect(byMeeting.get(viaEmail.meetingId)).toMatchObject({ state: "pending", trace_context: null });
    expect(byMeeting.get(simulated.meetingId)).toMatchObject({ state: "done", mode: "test" });
    expect((await latestDeliveries(db, simulated.meetingId)).map((d) => [d.email, d.kind, d.state])).toEqual([
      ["c@example.com", "request", "simulated"],
      ["d@example.com", "cancel", "simulated"],
    ]);
    await db("calendar_connections").where({ id: connection.id }).delete();
    for (const x of await claimDueChanges(db, "w", 100, 60_000)) await finishChange(db, x, "w", "done");
  });

  it("counts a change given twice in one batch, or again in a later one, once", async () => {
    const c = change(1);
    const planned: PlannedDelivery[] = [{ email: "a@example.com", kind: "request" }];
    const twice = await recordChanges(db, [
      { change: c, planned, traceContext: null },
      { change: c, planned, traceContext: null },
    ]);
    expect(twice).toEqual([{ meetingId: c.meetingId, sequence: 1, mode: "live", added: 1, channel: "email" }]);
    const again = await recordChanges(db, [
      { change: c, planned, traceContext: null },
      { change: change(2, c.meetingId), planned, traceContext: null },
    ]);
    expect(again.map((r) => [r.sequence, r.added])).toEqual([
      [1, 0],
      [2, 1],
    ]);
    expect(await recordChanges(db, [])).toEqual([]);
    for (const x of await claimDueChanges(db, "w", 100, 60_000)) await finishChange(db, x, "w", "done");
  });

  it("records a change that owes nothing as done, with no deliveries", async () => {
    const c = change(1);
    expect(await recordChanges(db, [{ change: c, planned: [], traceContext: null }])).toEqual([{ meetingId: c.meetingId, sequence: 1, mode: "live", added: 0, channel: "email" }]);
    expect((await db("meeting_changes").where({ meeting_id: c.meetingId }).first()).state).toBe("done");
    expect(await latestDeliveries(db, c.meetingId)).toEqual([]);
  });

  /** Claims the change and settles its deliveries as given (by address), as the worker would. */
  const deliver = async (c: MeetingChange, outcome: Record<string, "sent" | "failed">) => {
    const [claimed] = (await claimDueChanges(db, "w", 100, 60_000)).filter((x) => x.meetingId === c.meetingId && x.sequence === c.sequence);
    expect(claimed).toBeDefined();
    for (const row of await pendingDeliveries(db, c)) await settleDeliveries(db, c, [row], { state: outcome[row.email]!, channel: "email", attempts: 1 });
    const failed = Object.values(outcome).includes("failed");
    expect(await finishChange(db, c, "w", failed ? "failed" : "done", failed ? "refused" : undefined)).toBe(true);
  };
  const ledgerOf = async (meetingId: string) =>
    ((await db("deliveries").where({ meeting_id: meetingId }).orderBy(["sequence", "email"])) as Array<{ sequence: number; email: string; kind: string; state: string }>).map((d) => [
      d.sequence,
      d.email,
      d.kind,
      d.state,
    ]);

  it("keeps a settled change's key and outcome, not its meeting; its sent deliveries replace the meeting's earlier ones, and the event again adds nothing", async () => {
    const first = change(1);
    const traced = { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" };
    await recordChanges(db, [{ change: first, planned: [{ email: "a@example.com", kind: "request" }, { email: "b@example.com", kind: "request" }], traceContext: traced }]);
    await deliver(first, { "a@example.com": "sent", "b@example.com": "sent" });
    expect(await db("meeting_changes").where({ meeting_id: first.meetingId }).first()).toMatchObject({ sequence: 1, state: "done", meeting: null, trace_context: null });

    // b is dropped and c added: b hears a cancellation, a and c the new version.
    const second = change(2, first.meetingId);
    const planned: PlannedDelivery[] = [{ email: "a@example.com", kind: "request" }, { email: "c@example.com", kind: "request" }, { email: "b@example.com", kind: "cancel" }];
    await recordChanges(db, [{ change: second, planned, traceContext: null }]);
    // Until the new ones are sent, the earlier ones are what each participant has.
    expect(await ledgerOf(first.meetingId)).toEqual([
      [1, "a@example.com", "request", "sent"],
      [1, "b@example.com", "request", "sent"],
      [2, "a@example.com", "request", "pending"],
      [2, "b@example.com", "cancel", "pending"],
      [2, "c@example.com", "request", "pending"],
    ]);
    await deliver(second, { "a@example.com": "sent", "b@example.com": "sent", "c@example.com": "sent" });
    expect(await ledgerOf(first.meetingId)).toEqual([
      [2, "a@example.com", "request", "sent"],
      [2, "b@example.com", "cancel", "sent"],
      [2, "c@example.com", "request", "sent"],
    ]);

    // A change that fails replaces nothing: what a participant last received stays on record.
    const third = change(3, first.meetingId);
    await recordChanges(db, [{ change: third, planned: [{ email: "a@example.com", kind: "request" }, { email: "c@example.com", kind: "request" }], traceContext: null }]);
    await deliver(third, { "a@example.com": "failed", "c@example.com": "failed" });
    expect((await ledgerOf(first.meetingId)).filter(([, email]) => email === "a@example.com")).toEqual([
      [2, "a@example.com", "request", "sent"],
      [3, "a@example.com", "request", "failed"],
    ]);
    expect((await db("meeting_changes").where({ meeting_id: first.meetingId, sequence: 3 }).first()).meeting).toBeNull();

    // The first event delivered again (a replay): its key is still there, so it owes nothing again.
    const before = await ledgerOf(first.meetingId);
    expect(await recordChanges(db, [{ change: first, planned: [{ email: "a@example.com", kind: "request" }], traceContext: null }])).toEqual([
      { meetingId: first.meetingId, sequence: 1, mode: "live", added: 0, channel: "email" },
    ]);
    expect(await ledgerOf(first.meetingId)).toEqual(before);
  });

  it("keeps no meeting for a change recorded settled, and a simulated delivery replaces the earlier ones to its participant", async () => {
    const first = change(1, undefined, "test");
    await recordChanges(db, [{ change: first, planned: [{ email: "a@example.com", kind: "request" }, { email: "b@example.com", kind: "request" }], traceContext: null }]);
    await recordChanges(db, [{ change: change(2, first.meetingId, "test"), planned: [{ email: "a@example.com", kind: "request" }], traceContext: null }]);
    expect(await ledgerOf(first.meetingId)).toEqual([
      [1, "b@example.com", "request", "simulated"],
      [2, "a@example.com", "request", "simulated"],
    ]);
    const live = change(1);
    await recordChanges(db, [{ change: live, planned: [], traceContext: null }]);
    const changes = await db("meeting_changes").whereIn("meeting_id", [first.meetingId, live.meetingId]).select("meeting", "state");
    expect(changes).toEqual([
      { meeting: null, state: "done" },
      { meeting: null, state: "done" },
      { meeting: null, state: "done" },
    ]);
  });

  it("records simulated deliveries of first versions without reading the deliveries already kept", async () => {
    const simulatedCreate = () => ({ change: change(1, undefined, "test"), planned: [{ email: "a@example.com", kind: "request" as const }], traceContext: null });
    await recordChanges(db, Array.from({ length: 30 }, simulatedCreate));
    const rowsScanned = await db.transaction(async (trx) => {
      // The backend's counts not yet reported show here too: what this statement adds is the difference.
      const scanned = async () => Number(((await trx.raw("select seq_tup_read from pg_stat_xact_user_tables where relname = 'deliveries'")) as { rows: Array<{ seq_tup_read: string }> }).rows[0]!.seq_tup_read);
      const before = await scanned();
      expect((await recordChanges(trx, [simulatedCreate(), simulatedCreate()])).map((r) => r.added)).toEqual([1, 1]);
      return (await scanned()) - before;
    });
    // A first version has no earlier delivery to replace: a scan of every delivery would cost each batch the whole ledger.
    expect(rowsScanned).toBe(0);
  });

  // nextDueAt looks at every pending change: the tests of it start with none.
  const settleEverything = () => db("meeting_changes").where({ state: "pending" }).update({ state: "done" });

  it("holds a change until the one before it is recorded (replicas record side by side), and no longer than the grace", async () => {
    await settleEverything();
    const first = change(1);
    const second = change(2, first.meetingId);
    const planned: PlannedDelivery[] = [{ email: "a@example.com", kind: "request" }];
    await recordChanges(db, [{ change: second, planned, traceContext: null }]);
    expect((await claimDueChanges(db, "w", 100, 60_000)).filter((x) => x.meetingId === first.meetingId)).toEqual([]);
    // The worker sleeps until the grace is over rather than looking again at once.
    const due = await nextDueAt(db);
    expect(due!.getTime() - Date.now()).toBeGreaterThan((PREDECESSOR_GRACE_SECONDS - 10) * 1_000);

    // The change before it owed nothing: once it is recorded, the second goes.
    await recordChanges(db, [{ change: first, planned: [], traceContext: null }]);
    const claimed = (await claimDueChanges(db, "w", 100, 60_000)).filter((x) => x.meetingId === first.meetingId);
    expect(claimed.map((x) => x.sequence)).toEqual([2]);
    await finishChange(db, claimed[0]!, "w", "done");

    // A predecessor that never comes (recorded before every change was) holds a change up for the grace only.
    const orphan = change(3);
    await recordChanges(db, [{ change: orphan, planned, traceContext: null }]);
    expect((await claimDueChanges(db, "w", 100, 60_000)).filter((x) => x.meetingId === orphan.meetingId)).toEqual([]);
    await db("meeting_changes").where({ meeting_id: orphan.meetingId }).update({ created_at: db.raw(`clock_timestamp() - interval '${PREDECESSOR_GRACE_SECONDS + 1} seconds'`) });
    const late = (await claimDueChanges(db, "w", 100, 60_000)).filter((x) => x.meetingId === orphan.meetingId);
    expect(late.map((x) => x.sequence)).toEqual([3]);
    await finishChange(db, late[0]!, "w", "done");
  });

  it("says a change is due when it can be taken: not while it is leased or an earlier change of its meeting waits", async () => {
    await settleEverything();
    expect(await nextDueAt(db)).toBeUndefined();
    const first = change(1);
    const second = change(2, first.meetingId);
    const planned: PlannedDelivery[] = [{ email: "a@example.com", kind: "request" }];
    await recordChanges(db, [
      { change: first, planned, traceContext: null },
      { change: second, planned, traceContext: null },
    ]);
    expect((await nextDueAt(db))!.getTime()).toBeLessThanOrEqual(Date.now());
    const [leased] = (await claimDueChanges(db, "w", 100, 60_000)).filter((x) => x.meetingId === first.meetingId);
    expect(leased!.sequence).toBe(1);
    // The first is out under a minute's lease and the second waits for it: nothing is due before the lease ends.
    expect((await nextDueAt(db))!.getTime() - Date.now()).toBeGreaterThan(50_000);
    await scheduleRetry(db, leased!, "w", 30_000, "try again");
    expect((await nextDueAt(db))!.getTime() - Date.now()).toBeGreaterThan(20_000);
    await finishChange(db, leased!, "w", "done");
    expect((await nextDueAt(db))!.getTime()).toBeLessThanOrEqual(Date.now());
    for (const x of await claimDueChanges(db, "w", 100, 60_000)) await finishChange(db, x, "w", "done");
    expect(await nextDueAt(db)).toBeUndefined();
  });

  it("orders a series and its occurrences' changes as one meeting (one counter), and keeps their deliveries apart", async () => {
    await settleEverything();
    const series = { rule: "FREQ=WEEKLY;COUNT=4", timeZone: "Europe/Berlin", cancelledStarts: [] };
    const created = { ...change(1), series };
    const seriesMeeting = { ...created.meeting, recurrence: series.rule, seriesId: null, originalStartTime: null };
    const occurrenceId = `${created.meetingId}_20310101T100000Z`;
    const occurrenceOf = (sequence: number): MeetingChange => ({
      ...created,
      meetingId: occurrenceId,
      sequence,
      meeting: { ...seriesMeeting, id: occurrenceId, recurrence: null, seriesId: created.meetingId, originalStartTime: "2031-01-01T10:00:00Z", startTime: "2031-01-01T11:00:00Z" },
    });
    const planned: PlannedDelivery[] = [{ email: "a@example.com", kind: "request" }];
    // The exception is recorded first (another replica), before the series' invitation it changes.
    await recordChange(db, occurrenceOf(2), planned);
    const ours = async () => (await claimDueChanges(db, "w", 100, 60_000)).filter((x) => x.meetingId === occurrenceId || x.meetingId === created.meetingId);
    expect(await ours()).toEqual([]);
    await recordChange(db, { ...created, meeting: seriesMeeting }, planned);
    const [first, ...others] = await ours();
    expect([first?.meetingId, first?.sequence, others]).toEqual([created.meetingId, 1, []]);
    expect(first!.series).toEqual(series);
    await finishChange(db, first!, "w", "done");
    await db("deliveries").where({ meeting_id: created.meetingId }).update({ state: "sent" });
    const [exception] = await ours();
    expect([exception?.meetingId, exception?.sequence, exception?.meeting.seriesId]).toEqual([occurrenceId, 2, created.meetingId]);
    await settleDeliveries(db, exception!, await pendingDeliveries(db, exception!), { state: "sent", channel: "email", attempts: 1 });
    await finishChange(db, exception!, "w", "done");
    // The occurrence's update replaces nothing of the series': each keeps what its participant was last sent.
    expect(await ledgerOf(created.meetingId)).toEqual([[1, "a@example.com", "request", "sent"]]);
    expect(await ledgerOf(occurrenceId)).toEqual([[2, "a@example.com", "request", "sent"]]);
    expect(await db("meeting_changes").whereIn("meeting_id", [created.meetingId, occurrenceId]).orderBy("sequence").select("series_id", "series")).toEqual([
      { series_id: created.meetingId, series: null },
      { series_id: created.meetingId, series: null },
    ]);
  });
});
