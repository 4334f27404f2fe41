import { clusterServersAvailable, createTestDatabase, deleteNamespaceStreams, eventually, NATS_URL, REDIS_URL, startGatewayProcess, startServiceProcess, startTcpProxy, uniqueSuffix, type ServiceProcess, type TcpProxy } from "@sched/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const available = await clusterServersAvailable();
const ADMIN_TOKEN = "adm_database_down_test_token";

/** An API key no one was given: accounts must look it up in its database to refuse it. */
const unknownKey = () => `sk_test_${uniqueSuffix().repeat(4)}`;

describe.runIf(available)("accounts cut off from its database, behind a gateway", () => {
  let database: { url: string; drop: () => Promise<void> };
  let proxy: TcpProxy;
  let accounts: ServiceProcess;
  let gateway: ServiceProcess;
  const namespace = `dd${uniqueSuffix()}`;

  const me = async (key = unknownKey()) => {
    const res = await fetch(`${gateway.url}/v1/me`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(15_000) });
    return { status: res.status, retryAfter: res.headers.get("retry-after"), body: (await res.json()) as { error?: { code: string } } };
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    const target = new URL(database.url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    accounts = await startServiceProcess("accounts", { DATABASE_URL: proxy.via(database.url), NATS_URL, BUS_NAMESPACE: namespace });
    gateway = await startGatewayProcess({ NATS_URL, REDIS_URL, BUS_NAMESPACE: namespace, ADMIN_TOKEN, AUTH_CACHE_TTL_MS: "1" });
  }, 120_000);

  afterAll(async () => {
    await gateway?.kill();
    await accounts?.kill();
    await proxy?.close();
    await database?.drop();
    if (available) await deleteNamespaceStreams(NATS_URL, namespace);
  });

  it("answers 503 with Retry-After, not 500, while the database cannot be reached, and serves again once it can", async () => {
    expect((await me()).status).toBe(401);

    await proxy.cut();
    const started = Date.now();
    const down = await me();
    expect(down.status, JSON.stringify(down.body)).toBe(503);
    expect(down.body.error?.code).toBe("service_unavailable");
    expect(Number(down.retryAfter)).toBeGreaterThanOrEqual(1);
    // A refused connection is known at once: the client is not held until the deadline.
    expect(Date.now() - started).toBeLessThan(4_000);
    const admin = await fetch(`${gateway.url}/admin/v1/users?email=ana@example.com`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(admin.status).toBe(503);
    expect(admin.headers.get("retry-after")).not.toBeNull();
    // Its readiness says why.
    const ready = await eventually(async () => {
      const res = await fetch(`${accounts.healthUrl}/readyz`);
      const body = (await res.json()) as { checks: Record<string, boolean> };
      return res.status === 503 && body.checks.database === false && body.checks;
    }, 10_000);
    expect(ready.database).toBe(false);

    await proxy.restore();
    await eventually(async () => (await me()).status === 401, 20_000, 200);
    expect(accounts.output()).not.toMatch(/handler failed/);
  }, 60_000);
});
