import { openSchema, type Knex } from "@sched/db";
import type { Meeting } from "@sched/proto";
import { createTestDatabase } from "@sched/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimDueChanges, finishChange, latestDeliveries, recordChange, renewLease, scheduleRetry } from "../src/db/deliveries.js";
import type { MeetingChange } from "../src/domain/plan.js";
import { invitesService } from "../src/index.js";

let seq = 0;
function change(sequence: number, meetingId = `mtg_ledger${String(++seq).padStart(16, "0")}`, mode: "test" | "live" = "live"): MeetingChange {
  const meeting: Meeting = { id: meetingId, title: "T", description: "", startTime: "2031-01-01T10:00:00Z", duration: "30 mins", participants: ["a@example.com"], status: "confirmed", organizer: "o@example.com", createdAt: "2030-01-01T00:00:00Z" };
  return { meetingId, sequence, mode, organizer: { userId: "usr_1", email: "o@example.com" }, meeting };
}

describe("the delivery ledger (Postgres)", () => {
  let db: Knex;
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

  it("records test-mode changes as simulated and never hands them to a worker", async () => {
    const c = change(1, undefined, "test");
    await recordChange(db, c, [{ email: "a@example.com", kind: "request" }]);
    expect((await latestDeliveries(db, c.meetingId))[0]!.state).toBe("simulated");
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
});
