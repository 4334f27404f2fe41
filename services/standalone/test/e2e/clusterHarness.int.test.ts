import { clusterServersAvailable, createTestDatabase, deleteNamespaceStreams, eventually, freePort, NATS_URL, REDIS_URL, uniqueSuffix } from "@sched/testing";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { serviceModules } from "../../src/services.js";
import { ADMIN_TOKEN, call, createUserWithKey } from "../harness.js";

const available = await clusterServersAvailable();
const ROOT = fileURLToPath(new URL("../../../..", import.meta.url));

interface Harness {
  url: string;
  dashboardUrl: string;
  output(): string;
  /** The exit code once it has exited. */
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

/**
 * `npm run cluster` as a developer runs it, with only these settings: the
 * script itself, in a process group of its own so that stopping it takes
 * every process it started.
 */
async function startHarness(settings: Record<string, string>): Promise<Harness> {
  const port = Number(settings.PORT ?? (await freePort()));
  const dashboardPort = Number(settings.DASHBOARD_PORT ?? (await freePort()));
  const env: NodeJS.ProcessEnv = { ...process.env, NATS_URL, REDIS_URL, ADMIN_TOKEN, LOG_LEVEL: "warn", PORT: String(port), DASHBOARD_PORT: String(dashboardPort), ...settings };
  delete env.DASHBOARD_URL;
  delete env.HEALTH_PORT;
  if (settings.HEALTH_PORT) env.HEALTH_PORT = settings.HEALTH_PORT;
  const child = spawn(process.execPath, ["--conditions=@sched/source", "--import", "tsx", "services/standalone/src/cluster.ts"], {
    cwd: ROOT,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr.on("data", (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const group = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // The group is gone already.
    }
  };
  return {
    url: `http://127.0.0.1:${port}`,
    dashboardUrl: `http://localhost:${dashboardPort}/dashboard`,
    output: () => output,
    exited,
    stop: async () => {
      group("SIGTERM");
      const late = setTimeout(() => group("SIGKILL"), 30_000);
      await exited;
      clearTimeout(late);
      // Whatever outlived its parent (a process killed before it could stop its children).
      group("SIGKILL");
    },
  };
}

/** Resolves once the harness answers the admin API, with a user and key made there. */
async function serving(harness: Harness): Promise<{ key: string; email: string }> {
  return eventually(async () => {
    const code = await Promise.race([harness.exited, Promise.resolve("running" as const)]);
    if (code !== "running") throw new Error(`the cluster exited (${code}):\n${harness.output()}`);
    return createUserWithKey(harness.url).catch(() => undefined);
  }, 180_000, 1_000);
}

async function refusal(harness: Harness): Promise<string> {
  const code = await Promise.race([harness.exited, new Promise<"running">((resolve) => setTimeout(() => resolve("running"), 60_000))]);
  if (code === "running") {
    await harness.stop();
    throw new Error(`the cluster started instead of refusing:\n${harness.output()}`);
  }
  expect(code).toBe(1);
  return harness.output();
}

describe.runIf(available)("two local clusters on one NATS", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });
  const ownWorld = async () => {
    const [database, namespace] = [await createTestDatabase(), `c${uniqueSuffix()}`];
    cleanups.push(async () => {
      await database.drop();
      await deleteNamespaceStreams(NATS_URL, namespace);
    });
    return { DATABASE_URL: database.url, BUS_NAMESPACE: namespace };
  };
  const start = async (settings: Record<string, string>) => {
    const harness = await startHarness(settings);
    cleanups.push(() => harness.stop());
    return harness;
  };

  it("refuses a second one on a namespace in use or on a taken port, naming the setting, and two on their own namespaces each serve only their own requests", async () => {
    const firstWorld = await ownWorld();
    const first = await start(firstWorld);
    const firstUser = await serving(first);
    const takenHealth = first.output().match(/Health ports \(\/livez, \/readyz, \/metrics\): accounts (\d+)/)![1]!;

    // These never start, so they can share a database they would not touch anyway.
    const spare = await ownWorld();
    const sameNamespace = await refusal(await start({ ...spare, BUS_NAMESPACE: firstWorld.BUS_NAMESPACE }));
    expect(sameNamespace).toContain(
      `BUS_NAMESPACE=${firstWorld.BUS_NAMESPACE} is in use on ${NATS_URL}: ${serviceModules.map((m) => m.name).sort().join(", ")} already answer there`,
    );
    expect(sameNamespace).not.toContain("Scheduling API (cluster)");
    const samePort = await refusal(await start({ ...spare, PORT: new URL(first.url).port }));
    expect(samePort).toContain(`PORT=${new URL(first.url).port} (the gateway's) is in use`);
    const dashboardPort = new URL(first.dashboardUrl).port;
    const sameDashboardPort = await refusal(await start({ ...spare, DASHBOARD_PORT: dashboardPort }));
    expect(sameDashboardPort).toContain(`DASHBOARD_PORT=${dashboardPort} (the dashboard's) is in use`);
    const sameHealth = await refusal(await start({ ...spare, HEALTH_PORT: takenHealth }));
    expect(sameHealth).toContain(`HEALTH_PORT=${takenHealth}: ${takenHealth} (accounts)`);

    // The dashboard is a process of its own on its port; its sign-in links point there.
    const user = await call(first.url, "GET", `/admin/v1/users?email=${encodeURIComponent(firstUser.email)}`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    const link = await call(first.url, "POST", `/admin/v1/users/${user.body.data[0].id}/sign-in-links`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(link.body.url.startsWith(`${first.dashboardUrl}/sign-in?token=`)).toBe(true);
    const opened = await fetch(link.body.url.replace("localhost", "127.0.0.1"));
    expect(await opened.text()).toContain(firstUser.email);

    // The first one was not disturbed, and a second one on its own namespace runs beside it.
    expect((await call(first.url, "GET", "/v1/me", { key: firstUser.key })).body.email).toBe(firstUser.email);
    const second = await start(await ownWorld());
    const secondUser = await serving(second);
    expect((await call(second.url, "GET", "/v1/me", { key: secondUser.key })).body.email).toBe(secondUser.email);
    expect((await call(first.url, "GET", "/v1/me", { key: firstUser.key })).body.email).toBe(firstUser.email);
    // Each knows only its own keys: no request reached the other's services.
    for (let i = 0; i < 5; i++) {
      expect((await call(second.url, "GET", "/v1/me", { key: firstUser.key })).status).toBe(401);
      expect((await call(first.url, "GET", "/v1/me", { key: secondUser.key })).status).toBe(401);
    }
  }, 600_000);
});
