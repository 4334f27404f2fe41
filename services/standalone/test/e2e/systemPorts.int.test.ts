import { createLogger } from "@sched/logging";
import { clusterServersAvailable, createTestDatabase, deleteNamespaceStreams, NATS_URL, REDIS_URL, uniqueSuffix } from "@sched/testing";
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { System } from "../../src/system.js";
import { ADMIN_TOKEN } from "../harness.js";

const available = await clusterServersAvailable();

/** Whether this process could listen on `port` (every interface, as the system's servers do); given back at once when it could. */
function couldListen(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(port, () => server.close(() => resolve(true)));
  });
}

describe.runIf(available)("the ports a cluster system picks", () => {
  it("are never free for another to take from their choice until its servers listen on them", async () => {
    const database = await createTestDatabase();
    const namespace = `t${uniqueSuffix()}`;
    const system = new System({
      wiring: { kind: "cluster", natsUrl: NATS_URL, databaseUrl: database.url, redisUrl: REDIS_URL, namespace },
      logger: createLogger({ name: "e2e", level: "silent" }),
      port: 0,
      adminToken: ADMIN_TOKEN,
    });
    try {
      let started = false;
      const starting = system.start().finally(() => (started = true));
      // Another system's start beside this one: it tries the dashboard's port all the while the services migrate and start.
      let dashboardPort: number | undefined;
      let taken = 0;
      while (!started) {
        dashboardPort ??= portOf(system);
        if (dashboardPort !== undefined && (await couldListen(dashboardPort))) taken++;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await starting;
      expect(dashboardPort).toBeDefined();
      expect(taken).toBe(0);
      // Its pages answer there.
      expect((await fetch(`${system.dashboardUrl}/`, { redirect: "manual" })).status).toBe(303);
    } finally {
      await system.stop();
      await database.drop();
      await deleteNamespaceStreams(NATS_URL, namespace);
    }
  }, 120_000);
});

/** The dashboard's port once the system has chosen it. */
function portOf(system: System): number | undefined {
  try {
    return Number(new URL(system.dashboardUrl).port);
  } catch {
    return undefined;
  }
}
