import { bind, connectNatsBus, type Bus, type Stoppable } from "@sched/bus";
import { createLogger } from "@sched/logging";
import { accountsAuthenticate, meetingsList, SCOPES, type Caller } from "@sched/proto";
import { clusterServersAvailable, eventually, freePort, NATS_URL, REDIS_URL, uniqueSuffix } from "@sched/testing";
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../..", import.meta.url));
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
  let port: number;
  let healthPort: number;
  let child: ChildProcess;
  let exited: Promise<{ code: number | null; at: number }>;
  let output = "";
  let backend: Bus;
  let served: Stoppable;

  beforeAll(async () => {
    [port, healthPort] = [await freePort(), await freePort()];
    // Stands in for accounts (slowly, so requests are in flight when the gateway stops) and meetings.
    backend = await connectNatsBus({ servers: NATS_URL, namespace, name: "gateway-process-test", logger });
    served = await backend.serve({ name: "stand-in", version: "1.0.0" }, [
      bind(accountsAuthenticate, async () => {
        await new Promise((r) => setTimeout(r, AUTH_DELAY_MS));
        return { caller };
      }),
      bind(meetingsList, async () => ({ status: 200, body: { data: [] } })),
    ]);
    child = spawn(process.execPath, ["--conditions=@sched/source", "--import", "tsx", "--import", "@sched/telemetry/register", "services/gateway/src/main.ts"], {
      cwd: root,
      env: {
        ...process.env,
        PORT: String(port),
        HEALTH_PORT: String(healthPort),
        NATS_URL,
        REDIS_URL,
        BUS_NAMESPACE: namespace,
        ADMIN_TOKEN: "adm_gateway_process_test_token",
        // Keys are not cached, so every request waits on the slow stand-in.
        AUTH_CACHE_TTL_MS: "1",
        SHUTDOWN_GRACE_MS: String(GRACE_MS),
        SHUTDOWN_DELAY_MS: "300",
        LOG_LEVEL: "warn",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
    exited = new Promise((resolve) => child.once("exit", (code) => resolve({ code, at: Date.now() })));
    await eventually(async () => {
      const ready = await get(`http://127.0.0.1:${healthPort}/readyz`);
      return ready !== "refused" && ready.status === 200;
    }, 45_000, 200);
  }, 60_000);

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await served?.stop();
    await backend?.close();
  });

  it("answers its probes on HEALTH_PORT and counts requests by route there", async () => {
    expect(await get(`http://127.0.0.1:${healthPort}/livez`)).toMatchObject({ status: 200 });
    expect(await get(`http://127.0.0.1:${port}/v1/meetings/mtg_AbCdEfGhIjKlMnOpQrStUvWx/nope`, { authorization: `Bearer ${KEY}` })).toMatchObject({ status: 404 });
    expect(await get(`http://127.0.0.1:${port}/v1/meetings?limit=5`, { authorization: `Bearer ${KEY}` })).toMatchObject({ status: 200 });
    const metrics = await get(`http://127.0.0.1:${healthPort}/metrics`);
    expect(metrics).toMatchObject({ status: 200 });
    const text = (metrics as { text: string }).text;
    expect(text).toMatch(/^sched_http_server_duration_count\{route="\/v1\/meetings",method="GET",status="200"[^}]*\} 1$/m);
    expect(text).toMatch(/^sched_http_server_duration_count\{route="unmatched",method="GET",status="404"[^}]*\} 1$/m);
    expect(text).toMatch(/^sched_bus_client_duration_count\{subject="accounts\.v1\.authenticate",outcome="ok"[^}]*\} [1-9]/m);
    expect(text).not.toContain("mtg_AbCdEfGhIjKlMnOpQrStUvWx");
  });

  it("on SIGTERM turns unready, finishes the requests in progress and exits 0 in time", async () => {
    const inFlight = Array.from({ length: 5 }, () => get(`http://127.0.0.1:${port}/v1/meetings`, { authorization: `Bearer ${KEY}` }));
    await new Promise((r) => setTimeout(r, 100));
    const signalledAt = Date.now();
    child.kill("SIGTERM");
    // The signal takes a moment to arrive: poll until readiness changes.
    const probe = await eventually(async () => {
      const r = await get(`http://127.0.0.1:${healthPort}/readyz`);
      return r === "refused" || r.status !== 200 ? r : undefined;
    }, 2_000, 20);
    const answers = await Promise.all(inFlight);
    const exit = await exited;

    expect(probe === "refused" ? probe : probe.status).toBe(503);
    expect(answers.map((a) => (a === "refused" ? a : a.status))).toEqual([200, 200, 200, 200, 200]);
    expect(exit.code, output).toBe(0);
    expect(exit.at - signalledAt).toBeLessThan(GRACE_MS);
    expect(await get(`http://127.0.0.1:${port}/v1/meetings`, { authorization: `Bearer ${KEY}` })).toBe("refused");
  }, 30_000);
});
