import { readFileSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import { afterAll, describe, expect, it } from "vitest";
import { clusterServersAvailable, freePort, GATEWAY_NODE_OPTIONS, NATS_URL, REDIS_URL, startGatewayProcess, startRedisServer, uniqueSuffix, type ServiceProcess } from "../src/index.js";
import { listeningPorts } from "../src/listeningPorts.js";

const available = await clusterServersAvailable();
/** Two starts of a gateway process (the one that meets its port taken, and the next): each can take a minute beside a CPU hog. */
const START_TWICE_MS = 300_000;

/** Another process's health server, as a test beside this one may have on a port just picked: ready, as far as it knows. */
async function anotherHealthServer(port: number): Promise<Server> {
  const server = createHttpServer((_req, res) => res.end('{"status":"ready"}'));
  await new Promise<void>((resolve) => server.listen(port, resolve));
  return server;
}

const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

// A port picked free is given back for the process to listen on: taken meanwhile, the start goes on with new ones.
describe.runIf(available)("a process started on free ports", () => {
  const started: ServiceProcess[] = [];
  const env = { NATS_URL, REDIS_URL, BUS_NAMESPACE: `pp${uniqueSuffix()}`, ADMIN_TOKEN: "adm_test_token_0123456789abcdef" };
  afterAll(async () => {
    await Promise.all(started.map((p) => p.kill()));
  });

  it("starts again on other ports when its PORT was taken before it listened there", async () => {
    const taken = await anotherHealthServer(await freePort());
    const takenPort = (taken.address() as { port: number }).port;
    try {
      const gateway = await startGatewayProcess(env, { firstPorts: { port: takenPort, healthPort: await freePort() } });
      started.push(gateway);
      expect(gateway.port).not.toBe(takenPort);
      expect((await fetch(`${gateway.url}/healthz`)).status).toBe(200);
      expect(listeningPorts(gateway.pid)).toContain(gateway.port);
    } finally {
      await close(taken);
    }
  }, START_TWICE_MS);

  it("does not take another process's ready health server on its HEALTH_PORT for its own", async () => {
    const taken = await anotherHealthServer(await freePort());
    const takenPort = (taken.address() as { port: number }).port;
    try {
      const gateway = await startGatewayProcess(env, { firstPorts: { port: await freePort(), healthPort: takenPort } });
      started.push(gateway);
      expect(new URL(gateway.healthUrl).port).not.toBe(String(takenPort));
      expect((await fetch(`${gateway.healthUrl}/readyz`)).status).toBe(200);
      expect(listeningPorts(gateway.pid)).toContain(Number(new URL(gateway.healthUrl).port));
    } finally {
      await close(taken);
    }
  }, START_TWICE_MS);

  it("runs a gateway with the node options its image runs it with, before a caller's own", async () => {
    const gateway = await startGatewayProcess(env, { nodeArgs: ["--stack-trace-limit=20"] });
    started.push(gateway);
    const argv = readFileSync(`/proc/${gateway.pid}/cmdline`, "utf8").split("\0");
    expect(argv.slice(1, 1 + GATEWAY_NODE_OPTIONS.length + 1)).toEqual([...GATEWAY_NODE_OPTIONS, "--stack-trace-limit=20"]);
  }, START_TWICE_MS);

  it("does not take another redis-server on the port it was given for its own", async () => {
    const redis = await startRedisServer();
    started.push(redis);
    // A port given is the one its clients were told: taken, the start fails rather than move.
    await expect(startRedisServer(redis.port)).rejects.toThrow(/taken meanwhile/);
    expect(listeningPorts(redis.pid)).toContain(redis.port);
  }, 60_000);
});

describe("the ports a process listens on", () => {
  it("are read from /proc: this process's own listening socket, and not another's", async () => {
    const server = await anotherHealthServer(0);
    try {
      const { port } = server.address() as { port: number };
      expect(listeningPorts(process.pid)).toContain(port);
      expect(listeningPorts(process.ppid)?.has(port) ?? false).toBe(false);
      // A process that has ended listens on nothing.
      expect(listeningPorts(2 ** 22 + 1)?.size ?? 0).toBe(0);
    } finally {
      await close(server);
    }
  });
});
