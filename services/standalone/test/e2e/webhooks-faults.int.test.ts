import { clusterServersAvailable, eventually, NATS_URL, startServiceProcess, type ServiceProcess } from "@sched/testing";
import { webhooksService } from "@sched/webhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebhookReceiver } from "../fakes/webhookReceiver.js";
import { call, createUserWithKey, startTestSystem, type TestSystem } from "../harness.js";

const available = await clusterServersAvailable();
const MEETINGS = 20;

// The webhooks service as a process of its own, killed with SIGKILL while it
// delivers (no graceful stop: leases and unacknowledged events are all that is left).
describe.runIf(available)("webhooks across a killed process (cluster)", () => {
  let sys: TestSystem;
  const receiver = new WebhookReceiver();
  let processes: ServiceProcess[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    await receiver.start();
    sys = await startTestSystem("cluster");
    await sys.system.stopService("webhooks");
    env = {
      ...webhooksService.standaloneEnv,
      NATS_URL,
      DATABASE_URL: sys.databaseUrl!,
      BUS_NAMESPACE: sys.namespace!,
      WEBHOOKS_TIMEOUT_MS: "1500",
      WEBHOOKS_RETRY_BASE_MS: "100",
      WEBHOOKS_RETRY_MAX_DELAY_MS: "500",
      WEBHOOKS_POLL_MS: "100",
    };
    processes.push(await startServiceProcess("webhooks", env));
  }, 120_000);
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.kill()));
    await sys?.stop();
    await receiver.stop();
  });

  it("delivers every event at least once, a repeat with the same webhook-id, after a SIGKILL mid-stream", { timeout: 120_000 }, async () => {
    const user = await createUserWithKey(sys.url);
    const created = await call(sys.url, "POST", "/v1/webhook-endpoints", { key: user.key, body: { url: receiver.url("/slow", { delayMs: 300 }) } });
    expect(created.status).toBe(201);
    const ids: string[] = [];
    for (let i = 0; i < MEETINGS; i++) {
      if (i === MEETINGS / 4) {
        // Some deliveries are in flight (the receiver takes 300 ms each), some events not yet recorded.
        await eventually(() => receiver.at("/slow").length > 0, 30_000, 50);
        await processes[0]!.kill("SIGKILL");
      }
      const res = await call(sys.url, "POST", "/v1/meetings", { key: user.key, body: { title: `Kill ${i}`, duration: "15 mins", startTime: "2032-03-01T09:00:00Z", participants: ["k@example.com"], sendInvites: false } });
      expect(res.status).toBe(201);
      ids.push(res.body.id as string);
    }
    processes = [await startServiceProcess("webhooks", env)];
    const seen = () => new Set(receiver.at("/slow").map((r) => (JSON.parse(r.body) as { data: { object: { id: string } } }).data.object.id));
    await eventually(() => ids.every((id) => seen().has(id)), 90_000, 200);
    const webhookIdOf = new Map<string, string>();
    for (const r of receiver.at("/slow")) {
      const meeting = (JSON.parse(r.body) as { data: { object: { id: string } } }).data.object.id;
      const webhookId = String(r.headers["webhook-id"]);
      expect(webhookIdOf.get(meeting) ?? webhookId, `repeat of ${meeting}`).toBe(webhookId);
      webhookIdOf.set(meeting, webhookId);
    }
    expect(webhookIdOf.size).toBe(MEETINGS);
  });
});
