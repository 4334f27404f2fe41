import { invitesService } from "@sched/invites";
import { clusterServersAvailable, eventually, NATS_URL, startServiceProcess, uniqueSuffix, type ServiceProcess } from "@sched/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createUserWithKey } from "../harness.js";
import { parseInvite, startInvitesWorld, type InvitesWorld } from "../invitesSetup.js";

const available = await clusterServersAvailable();
const MEETINGS = 30;

// Replicas as production runs them: the system's own invites service and two more
// processes on the same stream and database, each taking batches of events side by side.
describe.runIf(available)("invites across replicas (cluster)", () => {
  let world: InvitesWorld;
  const replicas: ServiceProcess[] = [];

  beforeAll(async () => {
    world = await startInvitesWorld("cluster");
    const env = {
      ...invitesService.standaloneEnv,
      NATS_URL,
      DATABASE_URL: world.sys.databaseUrl!,
      BUS_NAMESPACE: world.sys.namespace!,
      SMTP_URL: world.smtpUrl,
      INVITE_RETRY_BASE_MS: "20",
      // The relay is a fake in the busy test process: a reply later than this leaves a send in doubt (not sent again for
      // 15 minutes), so the timeout allows for the machine's load rather than for a relay's usual speed.
      INVITE_TIMEOUT_MS: "10000",
      // Its debug lines say which replica recorded what.
      LOG_LEVEL: "debug",
    };
    replicas.push(...(await Promise.all([startServiceProcess("invites", env), startServiceProcess("invites", env)])));
  }, 120_000);
  afterAll(async () => {
    await Promise.all(replicas.map((p) => p.kill()));
    await world?.stop();
  });

  // 120 requests in a burst, then 90 deliveries: seconds on an idle machine, minutes beside a CPU hog.
  it("delivers every change of every meeting once, in the meeting's order, while three replicas record events side by side", { timeout: 240_000 }, async () => {
    const org = await createUserWithKey(world.url, { mode: "live" });
    const guest = `replicas-${uniqueSuffix()}@example.com`;
    // Each meeting is a draft (nothing sent), then confirmed, moved and cancelled, one change right after the other.
    const startedAt = Date.now();
    const ids = await Promise.all(
      Array.from({ length: MEETINGS }, async (_, i) => {
        const created = await call(world.url, "POST", "/v1/meetings", {
          key: org.key,
          body: { title: `Replica ${i}`, duration: "30 mins", startTime: `2032-03-${String(1 + (i % 28)).padStart(2, "0")}T09:00:00Z`, participants: [guest], status: "draft" },
        });
        expect(created.status).toBe(201);
        const id = created.body.id as string;
        for (const body of [{ status: "confirmed" }, { title: `Moved ${i}` }, { status: "cancelled" }]) {
          expect((await call(world.url, "PATCH", `/v1/meetings/${id}`, { key: org.key, body })).status).toBe(200);
        }
        return id;
      }),
    );

    // Delivering takes about as long as making them did (an event and a send per invite): the deadline follows that.
    const madeMs = Date.now() - startedAt;
    await eventually(() => world.smtp.to(guest).length >= 3 * MEETINGS, Math.max(40_000, 2 * madeMs), 100).catch((err: Error) => {
      const said = replicas.flatMap((p) => p.output().split("\n")).filter((line) => /"level":[4-9]\d/.test(line));
      throw new Error(`${world.smtp.to(guest).length} of ${3 * MEETINGS} invites arrived; the added replicas warned:\n${said.join("\n")}`, { cause: err });
    });
    // Give a duplicate the chance to show up before counting.
    await new Promise((r) => setTimeout(r, 500));
    const received = world.smtp.to(guest).map((m) => parseInvite(m.ics!));
    expect(received).toHaveLength(3 * MEETINGS);
    for (const id of ids) {
      const ofMeeting = received.filter((invite) => invite.uid.startsWith(`${id}@`)).map((invite) => `${invite.sequence} ${invite.method}`);
      expect(ofMeeting, id).toEqual(["2 REQUEST", "3 REQUEST", "4 CANCEL"]);
    }
    // The added replicas did take part (the ledger tests hold the ordering rule itself, race or not).
    expect(replicas.some((p) => p.output().includes("invites recorded"))).toBe(true);
  });
});
