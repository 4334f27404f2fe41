import { openSchema } from "@sched/db";
import { invitesService } from "@sched/invites";
import { meetingCreated } from "@sched/proto";
import { eventually, uniqueSuffix } from "@sched/testing";
import { describe, expect, it } from "vitest";
import { refuseFirstUpdate } from "@sched/testing/database-faults";
import { call, createUserWithKey, perSuite, WIRINGS } from "../harness.js";
import { parseInvite, startInvitesWorld, type InvitesWorld } from "../invitesSetup.js";

/** Every captured invite as "recipient uid sequence method", for counting duplicates. */
/** How many `invite.sent` public events the webhooks service recorded for the meetings. */
async function inviteSentEvents(world: InvitesWorld, meetingIds: string[]): Promise<number> {
  const [row] = await world.sys.system.database("webhooks")("events").whereIn("meeting_id", meetingIds).andWhere({ type: "invite.sent" }).count({ n: "*" });
  return Number(row!.n);
}

/** Waits until `expected` invite.sent events are recorded for the meetings, then lets a duplicate show up before answering how many there are. */
async function settledInviteEvents(world: InvitesWorld, meetingIds: string[], expected: number): Promise<number> {
  await eventually(async () => (await inviteSentEvents(world, meetingIds)) >= expected, 30_000, 100);
  await new Promise((r) => setTimeout(r, 500));
  return inviteSentEvents(world, meetingIds);
}

function deliveredKeys(world: InvitesWorld, recipients: Set<string>): string[] {
  return world.smtp.messages
    .filter((m) => m.envelopeTo.some((r) => recipients.has(r)))
    .map((m) => {
      const invite = parseInvite(m.ics!);
      return `${m.envelopeTo[0]} ${invite.uid} ${invite.sequence} ${invite.method}`;
    });
}

describe.each(WIRINGS)("invites under faults (%s)", async (wiring) => {
  let world: InvitesWorld;
  const { available } = await perSuite(wiring, async () => (world = await startInvitesWorld(wiring)));

  // 110 requests one at a time, then 220 deliveries: a minute on an idle machine's share, several beside a CPU hog.
  it.runIf(available)("sends exactly one invite per participant and change for 100 meetings made while the service was stopped", { timeout: 300_000 }, async () => {
    const org = await createUserWithKey(world.url, { mode: "live" });
    const tag = uniqueSuffix();
    const a = `a-${tag}@example.com`;
    const b = `b-${tag}@example.com`;
    await world.sys.system.stopService("invites");
    const ids: string[] = [];
    const createdAt = Date.now();
    // One at a time: the embedded database of standalone mode serves one session.
    for (let i = 0; i < 100; i++) {
      const res = await call(world.url, "POST", "/v1/meetings", { key: org.key, body: { title: `Stand-up ${i}`, duration: "15 mins", startTime: `2032-01-${String(1 + (i % 28)).padStart(2, "0")}T09:00:00Z`, participants: [a, b] } });
      expect(res.status).toBe(201);
      ids.push(res.body.id as string);
    }
    // A tenth of them also change while nobody delivers: a second change each.
    for (const id of ids.slice(0, 10)) {
      expect((await call(world.url, "PATCH", `/v1/meetings/${id}`, { key: org.key, body: { title: "Moved stand-up" } })).status).toBe(200);
    }
    const madeMs = Date.now() - createdAt;
    expect(world.smtp.messages.filter((m) => m.envelopeTo.includes(a))).toHaveLength(0);

    const restartedAt = Date.now();
    await world.sys.system.startService("invites");
    const expected = 2 * (100 + 10);
    const recipients = new Set([a, b]);
    // Delivering takes about as long as making them did (a request and a send per invite): the deadline follows that.
    await eventually(() => deliveredKeys(world, recipients).length >= expected, Math.max(40_000, 2 * madeMs), 100);
    console.info(`${wiring}: 100 meetings and 10 updates made in ${madeMs} ms; ${expected} invites delivered ${Date.now() - restartedAt} ms after the restart`);
    // Give a duplicate the chance to show up before counting.
    await new Promise((r) => setTimeout(r, 500));
    const keys = deliveredKeys(world, recipients);
    expect(keys).toHaveLength(expected);
    expect(new Set(keys).size).toBe(expected);
    for (const id of ids.slice(0, 10)) expect(keys.filter((k) => k.includes(`${id}@`) && k.includes(" 2 REQUEST"))).toHaveLength(2);
    // One public invite.sent event per invite sent, through invites' outbox and webhooks' consumer.
    expect(await settledInviteEvents(world, ids, expected)).toBe(expected);
  });

  it.runIf(available)("sends nothing twice when an event is delivered again", async () => {
    const org = await createUserWithKey(world.url, { mode: "live" });
    const guest = `again-${uniqueSuffix()}@example.com`;
    const created = await call(world.url, "POST", "/v1/meetings", { key: org.key, body: { title: "Once", duration: "30 mins", startTime: "2032-02-01T10:00:00Z", participants: [guest] } });
    await eventually(() => world.smtp.to(guest).length === 1);
    // The same event again, as a redelivery after a lost acknowledgement would bring it.
    await world.sys.system.bus.publish(
      meetingCreated,
      { eventId: `evt_${uniqueSuffix()}`, meetingId: created.body.id, mode: "live", organizer: { userId: org.userId, email: org.email }, meeting: created.body, sequence: 1, sendInvites: true, occurredAt: created.body.createdAt },
      { msgId: `redelivery-${uniqueSuffix()}` },
    );
    const marker = `marker-${uniqueSuffix()}@example.com`;
    await call(world.url, "POST", "/v1/meetings", { key: org.key, body: { title: "After", duration: "30 mins", startTime: "2032-02-01T11:00:00Z", participants: [marker] } });
    // Events are handled in order: once the later one is delivered, the repeated one has been handled too.
    await eventually(() => world.smtp.to(marker).length === 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(world.smtp.to(guest)).toHaveLength(1);
    const invites = await call(world.url, "GET", `/v1/meetings/${created.body.id}/invites`, { key: org.key });
    expect(invites.body.data).toEqual([expect.objectContaining({ email: guest, state: "sent", attempts: 1 })]);
    expect(await settledInviteEvents(world, [created.body.id], 1)).toBe(1);
  });

  // The cluster wiring's database can be reached from outside the system, to make it refuse a statement.
  it.runIf(available && wiring === "cluster")("sends an invite once when the database refuses to record it sent for a moment, and shows it sent", async () => {
    const db = await openSchema({ kind: "postgres", url: world.sys.databaseUrl!, poolMax: 1 }, invitesService.schema, invitesService.migrations);
    const refusal = await refuseFirstUpdate(db, "deliveries", "new.state = 'sent' and old.state = 'pending'");
    try {
      const org = await createUserWithKey(world.url, { mode: "live" });
      const guest = `blip-${uniqueSuffix()}@example.com`;
      const created = await call(world.url, "POST", "/v1/meetings", { key: org.key, body: { title: "Blip", duration: "30 mins", startTime: "2032-02-02T10:00:00Z", participants: [guest] } });
      expect(created.status).toBe(201);
      const invites = await eventually(async () => {
        const res = await call(world.url, "GET", `/v1/meetings/${created.body.id}/invites`, { key: org.key });
        return res.body.data?.[0]?.state === "sent" ? res.body.data : undefined;
      }, 20_000);
      expect(await refusal.tries()).toBeGreaterThanOrEqual(2);
      // Give a second copy the chance to show up before counting.
      await new Promise((r) => setTimeout(r, 500));
      expect(world.smtp.to(guest)).toHaveLength(1);
      expect(invites).toEqual([expect.objectContaining({ email: guest, state: "sent", attempts: 1 })]);
      // The refused statement took its event with it: the one that was recorded wrote one.
      expect(await settledInviteEvents(world, [created.body.id], 1)).toBe(1);
    } finally {
      await refusal.undo();
      await db.destroy();
    }
  });
});
