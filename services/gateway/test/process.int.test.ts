import { bind, connectNatsBus, type Bus, type Stoppable } from "@sched/bus";
import { createLogger } from "@sched/logging";
import { accountsAuthenticate, meetingsList, SCOPES, type Caller } from "@sched/proto";
import { clusterServersAvailable, eventually, NATS_URL, REDIS_URL, startGatewayProcess, uniqueSuffix, type ServiceProcess } from "@sched/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const logger = createLogger({ name: "gateway-process-test", level: "silent" });
const available = await clusterServersAvailable();
const GRACE_MS = 8_000;
const AUTH_DELAY_MS = 700;
const KEY = `sk_test_${"A".repeat(40)}`;
const caller: Caller = { userId: "usr_GatewayProcess000000000", email: "owner@example.com", timezone: "UTC", mode: "test", scopes: [...SCOPES], apiKeyId: "key_GatewayProcess000000000" };

async function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string } | "refused"> {
  try {
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(5_000) });
    return { status: res.status, text: await res.text() };
  } catch {
    return "refused";
  }
}

describe.runIf(available)("the gateway process", () => {
  const namespace = `gw${uniqueSuffix()}`;
  let gateway: ServiceProcess;
  let backend: Bus;
  let served: Stoppable;

  beforeAll(async () => {
    // Stands in for accounts (slowly, so requests are in flight when the gateway stops) and meetings.
    backend = await connectNatsBus({ servers: NATS_URL, namespace, name: "gateway-process-test", logger });
    served = await backend.serve({ name: "stand-in", version: "1.0.0" }, [
      bind(accountsAuthenticate, async () => {
        await new Promise((r) => setTimeout(r, AUTH_DELAY_MS));
        return { caller };
      }),
      bind(meetingsList, async () => ({ status: 200, body: { data: [], hasMore: false } })),
    ]);
    gateway = await startGatewayProcess(
      {
        NATS_URL,
        REDIS_URL,
        BUS_NAMESPACE: namespace,
        ADMIN_TOKEN: "adm_gateway_process_test_token",
        // Keys are not cached, so every request waits on the slow stand-in.
        AUTH_CACHE_TTL_MS: "1",
        SHUTDOWN_GRACE_MS: String(GRACE_MS),
        SHUTDOWN_DELAY_MS: "300",
      },
      { telemetry: true },
    );
  }, 100_000);

  afterAll(async () => {
    await gateway?.kill();
    await served?.stop();
    await backend?.close();
  });

  it("answers its probes on HEALTH_PORT and counts requests by route there", async () => {
    expect(await get(`${gateway.healthUrl}/livez`)).toMatchObject({ status: 200 });
    expect(await get(`${gateway.url}/v1/meetings/mtg_AbCdEfGhIjKlMnOpQrStUvWx/nope`, { authorization: `Bearer ${KEY}` })).toMatchObject({ status: 404 });
    expect(await get(`${gateway.url}/v1/meetings?limit=5`, { authorization: `Bearer ${KEY}` })).toMatchObject({ status: 200 });
    const metrics = await get(`${gateway.healthUrl}/metrics`);
    expect(metrics).toMatchObject({ status: 200 });
    const text = (metrics as { text: string }).text;
    expect(text).toMatch(/^sched_http_server_duration_count\{route="\/v1\/meetings",method="GET",status="200"[^}]*\} 1$/m);
    expect(text).toMatch(/^sched_http_server_duration_count\{route="unmatched",method="GET",status="404"[^}]*\} 1$/m);
    expect(text).toMatch(/^sched_bus_client_duration_count\{subject="accounts\.v1\.authenticate",outcome="ok"[^}]*\} [1-9]/m);
    expect(text).not.toContain("mtg_AbCdEfGhIjKlMnOpQrStUvWx");
  });

  it("on SIGTERM turns unready, finishes the requests in progress and exits 0 in time", async () => {
    const inFlight = Array.from({ length: 5 }, () => get(`${gateway.url}/v1/meetings`, { authorization: `Bearer ${KEY}` }));
    await new Promise((r) => setTimeout(r, 100));
    const signalledAt = Date.now();
    gateway.signal("SIGTERM");
    // The signal takes a moment to arrive: poll until readiness changes.
    const probe = await eventually(async () => {
      const r = await get(`${gateway.healthUrl}/readyz`);
      return r === "refused" || r.status !== 200 ? r : undefined;
    }, 2_000, 20);
    const answers = await Promise.all(inFlight);
    const exit = await gateway.exited;

    expect(probe === "refused" ? probe : probe.status).toBe(503);
    expect(answers.map((a) => (a === "refused" ? a : a.status))).toEqual([200, 200, 200, 200, 200]);
    expect(exit.code, gateway.output()).toBe(0);
    expect(exit.at - signalledAt).toBeLessThan(GRACE_MS);
    expect(await get(`${gateway.url}/v1/meetings`, { authorization: `Bearer ${KEY}` })).toBe("refused");
  }, 30_000);
});
