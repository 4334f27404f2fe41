import { invitesService } from "@sched/invites";
import { clusterServersAvailable, eventually, NATS_URL, startServiceProcess, uniqueSuffix, type ServiceProcess } from "@sched/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createUserWithKey } from "../harness.js";
import { startInvitesWorld, type InvitesWorld } from "../invitesSetup.js";
import { CountingProxy } from "../fakes/countingProxy.js";
import { Radicale, radicaleInstalled } from "@sched/testing/radicale";

const available = (await clusterServersAvailable()) && radicaleInstalled();
const PASSWORD = "app-password-1";
/**
 * Long beside one poll (a login and a REPORT, about a second on a busy machine), so two
 * replicas each polling every connection show more reads than one a round allows (with
 * the turns left out: 12 and 11 in nine 4-second intervals, 10 allowed; the longer
 * interval here widens that gap).
 */
const POLL_MS = 5_000;
const OBSERVED_MS = 40_000;

// Two invites replicas on one database: the system's own and one more process, each running the CalDAV answers poller.
describe.runIf(available)("CalDAV answers read back across invites replicas (cluster)", () => {
  let world: InvitesWorld;
  let radicale: Radicale;
  let proxy: CountingProxy;
  let proxyUrl: string;
  let replica: ServiceProcess;

  beforeAll(async () => {
    radicale = new Radicale({ ann: PASSWORD, rea: PASSWORD });
    await radicale.start();
    proxy = new CountingProxy(radicale.url);
    proxyUrl = await proxy.start();
    world = await startInvitesWorld("cluster", { CALDAV_ANSWERS_POLL_MS: String(POLL_MS) });
    replica = await startServiceProcess("invites", {
      ...invitesService.standaloneEnv,
      NATS_URL,
      DATABASE_URL: world.sys.databaseUrl!,
      BUS_NAMESPACE: world.sys.namespace!,
      SMTP_URL: world.smtpUrl,
      CALDAV_ANSWERS_POLL_MS: String(POLL_MS),
    });
  }, 120_000);
  afterAll(async () => {
    await replica?.kill();
    await world?.stop();
    await proxy?.stop();
    await radicale?.stop();
  });

  it("reads each connection once a round, not once a round per replica", { timeout: 180_000 }, async () => {
    for (const user of ["ann", "rea"]) {
      const org = await createUserWithKey(world.url, { mode: "live" });
      await (await radicale.client(user)).makeCalendar({ url: `${radicale.url}${user}/work/`, props: { displayname: "work" } });
      const connected = await call(world.url, "POST", "/v1/calendar-connections/caldav", { key: org.key, body: { serverUrl: proxyUrl, username: user, password: PASSWORD } });
      expect(connected.status).toBe(201);
      expect((await call(world.url, "PATCH", `/v1/calendar-connections/${connected.body.id as string}`, { key: org.key, body: { default: true } })).status).toBe(200);
      const created = await call(world.url, "POST", "/v1/meetings", { key: org.key, body: { title: `Polled ${user}`, duration: "30 mins", startTime: "2031-07-01T09:00:00Z", participants: [`guest-${uniqueSuffix()}@example.com`] } });
      expect(created.status).toBe(201);
      await eventually(async () => {
        const invites = await call(world.url, "GET", `/v1/meetings/${created.body.id as string}/invites`, { key: org.key });
        return (invites.body.data as Array<{ state: string; channel: string }>).some((i) => i.state === "sent" && i.channel === "caldav") ? true : undefined;
      }, 30_000, 100);
    }

    // A poll of a connection reads its meetings' events with one REPORT.
    const reads = (user: string) => proxy.requests.filter((r) => r.user === user && r.method === "REPORT").length;
    await eventually(() => (reads("ann") > 0 && reads("rea") > 0 ? true : undefined), 30_000, 100);
    const before = { ann: reads("ann"), rea: reads("rea") };
    const since = Date.now();
    await new Promise((resolve) => setTimeout(resolve, OBSERVED_MS));
    const rounds = Math.ceil((Date.now() - since) / POLL_MS);
    for (const user of ["ann", "rea"] as const) {
      const polled = reads(user) - before[user];
      expect(polled, `${user}: ${polled} reads in ${rounds} rounds`).toBeGreaterThanOrEqual(2);
      expect(polled, `${user}: ${polled} reads in ${rounds} rounds`).toBeLessThanOrEqual(rounds + 1);
    }
  });
});
