import { openSchema, type Knex } from "@sched/db";
import { createLogger } from "@sched/logging";
import type { Meeting } from "@sched/proto";
import { createTestDatabase, eventually, uniqueSuffix } from "@sched/testing";
import { SmtpFake } from "@sched/testing/smtp";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { refuseFirstUpdate } from "@sched/testing/database-faults";
import { beginSending, claimDueChanges, latestDeliveries, recordChanges, SENDING_PRESUMED_LOST_SECONDS } from "../src/db/queries.js";
import { EmailSender } from "../src/outbound/email.js";
import { GoogleCalendar } from "../src/outbound/google.js";
import { ConnectionVault } from "../src/outbound/vault.js";
import { DeliveryWorker, type WorkerSettings } from "../src/outbound/worker.js";
import { TokenCipher } from "../src/domain/tokenCipher.js";
import { DEV_CALENDAR_TOKEN_KEY, invitesService } from "../src/service.js";

// Workers as each replica runs them, on a real Postgres and a real SMTP server on loopback.
describe("the delivery worker (Postgres, SMTP)", () => {
  const logger = createLogger({ name: "invites-worker-test", level: "silent" });
  const smtp = new SmtpFake();
  let email: EmailSender;
  let db: Knex;
  let drop: () => Promise<void>;
  let relayUrl: string;
  const workers: DeliveryWorker[] = [];

  const startWorker = (settings: Partial<WorkerSettings> = {}, sender: EmailSender = email) => {
    const google = new GoogleCalendar({ redirectUrl: "http://localhost/", apiRootUrl: "http://127.0.0.1:9/", authUrl: "http://127.0.0.1:9/", tokenUrl: "http://127.0.0.1:9/", timeoutMs: 1_000 });
    const vault = new ConnectionVault(db, new TokenCipher(Buffer.from(DEV_CALENDAR_TOKEN_KEY, "base64")), google, logger);
    const worker = new DeliveryWorker({ db, logger, email: sender, google, vault, settings: { uidDomain: "sched.invalid", providerTimeoutMs: 1_000, maxAttempts: 4, retryBaseMs: 20, leaseMs: 60_000, batch: 8, pollMs: 50, ...settings } });
    workers.push(worker);
    worker.start();
    return worker;
  };

  /** A live meeting of one participant, recorded as the event consumer records it. */
  const owe = async (guest: string) => {
    const meetingId = `mtg_${uniqueSuffix().replace(/[^a-z0-9]/gi, "").padEnd(20, "0").slice(0, 20)}`;
    const meeting: Meeting = { id: meetingId, title: "Once", description: "", startTime: "2031-01-01T10:00:00Z", duration: "30 mins", participants: [guest], status: "confirmed", organizer: "o@example.com", createdAt: "2030-01-01T00:00:00Z", attendees: [], recurrence: null, seriesId: null, originalStartTime: null };
    await recordChanges(db, [{ change: { meetingId, sequence: 1, mode: "live", organizer: { userId: "usr_1", email: "o@example.com" }, meeting }, planned: [{ email: guest, kind: "request" }], traceContext: null }]);
    return meetingId;
  };
  const settled = async (meetingId: string) => {
    const change = await db("meeting_changes").where({ meeting_id: meetingId }).first();
    return change.state === "pending" ? undefined : { change: change.state as string, deliveries: (await latestDeliveries(db, meetingId)).map((d) => [d.state, d.attempts]) };
  };

  beforeAll(async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    db = await openSchema({ kind: "postgres", url: database.url, poolMax: 4 }, invitesService.schema, invitesService.migrations);
    relayUrl = await smtp.start();
    email = new EmailSender({ smtpUrl: relayUrl, from: "invites@example.com", uidDomain: "sched.test", timeoutMs: 10_000 });
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    smtp.answerDelayMs = 0;
  });
  afterAll(async () => {
    email?.close();
    await smtp.stop();
    await db?.destroy();
    await drop?.();
  });

  it("sends an invite once when recording that it went out fails, and records it sent once the database answers again", async () => {
    // The database refuses the first statement that records a sent delivery, as one restarting would.
    const refusal = await refuseFirstUpdate(db, "deliveries", "new.state = 'sent' and old.state = 'pending'");
    try {
      const guest = `blip-${uniqueSuffix()}@example.com`;
      const meetingId = await owe(guest);
      startWorker();
      const outcome = await eventually(() => settled(meetingId), 20_000);
      // Refused once, then taken.
      expect(await refusal.tries()).toBeGreaterThanOrEqual(2);
      await new Promise((r) => setTimeout(r, 300));
      expect(smtp.to(guest)).toHaveLength(1);
      expect(outcome).toEqual({ change: "done", deliveries: [["sent", 1]] });
    } finally {
      await refusal.undo();
    }
  });

  it("sends an invite once when the relay answers later than the lease, with a second worker claiming", async () => {
    smtp.answerDelayMs = 5_000;
    const guest = `slow-${uniqueSuffix()}@example.com`;
    const meetingId = await owe(guest);
    startWorker({ leaseMs: 2_000 });
    await eventually(() => smtp.to(guest).length > 0, 10_000);
    const leaseOf = async () => (await db.raw("select lease_owner, lease_until > clock_timestamp() as held from meeting_changes where meeting_id = ?", [meetingId])).rows[0];
    const sender = await leaseOf();
    // The first is sending; the second looks for due work all along.
    startWorker({ leaseMs: 2_000 });
    await new Promise((r) => setTimeout(r, 2_500));
    // Past the lease the sender still holds it: it renews it while it sends.
    expect(await leaseOf()).toEqual({ lease_owner: sender.lease_owner, held: true });
    await eventually(() => settled(meetingId), 20_000);
    // Past the lease again: nobody sends it a second time.
    await new Promise((r) => setTimeout(r, 2_500));
    expect(smtp.to(guest)).toHaveLength(1);
    expect(await settled(meetingId)).toEqual({ change: "done", deliveries: [["sent", 1]] });
  });

  it("does not send again an invite the relay took but answered for after the e-mail timeout: the send is in doubt, not failed", async () => {
    // The relay keeps the message, then stays silent past the sender's timeout, as a relay on a busy machine does.
    smtp.answerDelayMs = 1_500;
    const impatient = new EmailSender({ smtpUrl: relayUrl, from: "invites@example.com", uidDomain: "sched.test", timeoutMs: 300 });
    try {
      const guest = `silent-${uniqueSuffix()}@example.com`;
      const meetingId = await owe(guest);
      startWorker({ leaseMs: 1_000 }, impatient);
      startWorker({ leaseMs: 1_000 }, impatient);
      const held = async () => (await db("deliveries").where({ meeting_id: meetingId }).first()) as { state: string; sending_attempt: string | null; last_error: string | null };
      await eventually(async () => (await held()).sending_attempt?.startsWith("in-doubt:"), 20_000);
      expect(smtp.to(guest)).toHaveLength(1);
      expect(await held()).toMatchObject({ state: "pending", last_error: "SMTP: Timeout" });
      // Both workers look at the change again and again (every lease): neither sends it a second time.
      smtp.answerDelayMs = 0;
      await new Promise((r) => setTimeout(r, 3_000));
      expect(smtp.to(guest)).toHaveLength(1);
      expect((await held()).sending_attempt).toMatch(/^in-doubt:/);
    } finally {
      impatient.close();
    }
  });

  it("does not send again a delivery another worker may have sent, until that send is presumed lost", async () => {
    const guest = `doubt-${uniqueSuffix()}@example.com`;
    const meetingId = await owe(guest);
    // A worker claims the change, marks the delivery as being sent, and dies before recording what happened.
    const [claimed] = (await claimDueChanges(db, "worker-gone", 100, 500)).filter((c) => c.meetingId === meetingId);
    const [row] = await db("deliveries").where({ meeting_id: meetingId });
    expect(await beginSending(db, claimed!, "worker-gone", 500, [{ email: row.email, kind: row.kind, sendingAttempt: null }], "attempt-gone")).toEqual({ leased: true, marked: 1 });
    startWorker();
    // Its lease runs out and another worker takes the change: it finds the send in doubt, and waits.
    await eventually(async () => (await db("meeting_changes").where({ meeting_id: meetingId }).first()).lease_owner !== "worker-gone", 10_000);
    await new Promise((r) => setTimeout(r, 500));
    expect(smtp.to(guest)).toHaveLength(0);
    expect(await db("meeting_changes").where({ meeting_id: meetingId }).first()).toMatchObject({ state: "pending", attempts: 1 });

    // Long past any send's time, the delivery is presumed lost and sent again, once.
    await db("deliveries")
      .where({ meeting_id: meetingId })
      .update({ sending_since: db.raw(`clock_timestamp() - interval '${SENDING_PRESUMED_LOST_SECONDS + 1} seconds'`) });
    await db("meeting_changes").where({ meeting_id: meetingId }).update({ next_attempt_at: db.fn.now() });
    expect(await eventually(() => settled(meetingId), 20_000)).toEqual({ change: "done", deliveries: [["sent", 2]] });
    expect(smtp.to(guest)).toHaveLength(1);
  });
});
