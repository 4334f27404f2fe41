import { createLogger } from "@sched/logging";
import {
  now,
  observeOutboxLag,
  recordBusRequest,
  recordEventConsumed,
  recordEventPublished,
  recordHttpRequest,
  recordInviteDelivery,
  startTelemetry,
} from "@sched/telemetry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHealthServer, type HealthServer } from "../src/index.js";

const logger = createLogger({ name: "health-test", level: "silent" });

describe("the health server", () => {
  let server: HealthServer;
  let checks: Record<string, boolean> = { bus: true, database: true, migrations: true };
  let hang = false;
  let stopping = false;
  const url = (path: string) => `http://127.0.0.1:${server.port}${path}`;
  const get = async (path: string, init?: RequestInit) => {
    const res = await fetch(url(path), init);
    return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
  };

  beforeAll(async () => {
    await startTelemetry({ serviceName: "health-test" });
    server = await startHealthServer({
      port: 0,
      host: "127.0.0.1",
      logger,
      stopping: () => stopping,
      checkTimeoutMs: 200,
      checks: async () => {
        if (hang) await new Promise((resolve) => setTimeout(resolve, 2_000));
        return checks;
      },
    });
  });

  afterAll(async () => {
    await server?.close();
  });

  it("is live as long as the process answers", async () => {
    expect(await get("/livez")).toMatchObject({ status: 200, text: '{"status":"ok"}' });
  });

  it("is ready only when every check holds, naming the one that does not", async () => {
    expect(await get("/readyz")).toMatchObject({ status: 200 });
    checks = { bus: false, database: true, migrations: true };
    const down = await get("/readyz");
    expect(down.status).toBe(503);
    expect(JSON.parse(down.text)).toEqual({ status: "not_ready", checks });
    checks = { bus: true, database: true, migrations: true };
  });

  it("is not ready when a check hangs, and answers by the check timeout", async () => {
    hang = true;
    const started = Date.now();
    const res = await get("/readyz");
    hang = false;
    expect(res.status).toBe(503);
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it("turns unready as soon as shutdown begins, while still live", async () => {
    stopping = true;
    const res = await get("/readyz");
    stopping = false;
    expect(res.status).toBe(503);
    expect(JSON.parse(res.text).status).toBe("stopping");
    expect((await get("/livez")).status).toBe(200);
  });

  it("serves every instrument as Prometheus text on /metrics", async () => {
    const t = now();
    recordHttpRequest("/v1/meetings", "POST", 201, t);
    recordHttpRequest("/v1/meetings", "POST", 429, t);
    recordBusRequest("client", "meetings.v1.http.create", "ok", t);
    recordBusRequest("client", "meetings.v1.http.create", "timeout", t);
    recordBusRequest("server", "meetings.v1.http.create", "server_error", t);
    recordEventPublished("meetings.v1.events.meeting.created", true);
    recordEventConsumed("meetings.v1.events.meeting.created", "retry", t);
    recordInviteDelivery("sent");
    const stop = observeOutboxLag(() => ({ outbox: "meetings", seconds: 1.5 }));
    const res = await get("/metrics");
    stop();
    expect(res.status).toBe(200);
    expect(res.type).toContain("text/plain");
    const series = (name: string, labels: string) => new RegExp(`^${name}(_total|_count)?\\{[^}]*${labels}[^}]*\\} \\S+$`, "m");
    expect(res.text).toMatch(series("sched_http_server_duration", 'route="/v1/meetings",method="POST",status="201"'));
    expect(res.text).toMatch(series("sched_gateway_rate_limited", 'route="/v1/meetings"'));
    expect(res.text).toMatch(series("sched_bus_client_duration", 'subject="meetings.v1.http.create",outcome="timeout"'));
    expect(res.text).toMatch(series("sched_bus_server_duration", 'outcome="server_error"'));
    expect(res.text).toMatch(series("sched_bus_timeouts", 'subject="meetings.v1.http.create"'));
    expect(res.text).toMatch(series("sched_bus_errors", 'side="server",type="server_error"'));
    expect(res.text).toMatch(series("sched_bus_events_published", 'outcome="ok"'));
    expect(res.text).toMatch(series("sched_bus_consumer_duration", 'outcome="retry"'));
    expect(res.text).toMatch(series("sched_invites_deliveries", 'state="sent"'));
    expect(res.text).toMatch(/^sched_outbox_lag\{outbox="meetings"[^}]*\} 1\.5$/m);
  });

  it("refuses other paths and methods", async () => {
    expect((await get("/nope")).status).toBe(404);
    expect((await get("/livez", { method: "POST" })).status).toBe(405);
  });
});
