import pg from "pg";
import { randomBytes } from "node:crypto";
import { createConnection } from "node:net";

export const POSTGRES_ADMIN_URL = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const NATS_URL = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/** A short random token for names that must not collide between parallel suites. */
export function uniqueSuffix(): string {
  return randomBytes(5).toString("hex");
}

/** Whether something listens on host:port (to skip cluster suites where no server runs). */
export function isListening(url: string, defaultPort: number): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const socket = createConnection({ host: u.hostname, port: Number(u.port || defaultPort) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

/**
 * Whether the cluster-mode suites can run. In CI (CI=true) a missing server is
 * a failure, not a skip: the cluster suites are required there.
 */
export async function clusterServersAvailable(): Promise<boolean> {
  const [pgUp, natsUp, redisUp] = await Promise.all([
    isListening(POSTGRES_ADMIN_URL, 5432),
    isListening(NATS_URL, 4222),
    isListening(REDIS_URL, 6379),
  ]);
  const ok = pgUp && natsUp && redisUp;
  if (!ok) {
    const missing = [!pgUp && "Postgres", !natsUp && "NATS", !redisUp && "Redis"].filter(Boolean).join(", ");
    if (process.env.CI === "true") throw new Error(`cluster suites are required in CI but ${missing} is not reachable`);
    console.warn(`skipping cluster-mode suite: ${missing} not reachable`);
  }
  return ok;
}

/** A fresh Postgres database for one suite; `drop()` removes it. */
export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `sched_test_${uniqueSuffix()}`;
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

/** Polls until `check` returns a truthy value or the time is up. */
export async function eventually<T>(check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 15_000, everyMs = 25): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
export { thrown, rejection } from "./appErrors.js";
export { meetingsCaller, servedRequest } from "./callers.js";
export { deleteNamespaceStreams } from "./nats.js";
export { freePort, GATEWAY_NODE_OPTIONS, startGatewayProcess, startRedisServer, startServiceProcess, type ServiceProcess } from "./processes.js";
export { seededRandom } from "./random.js";
export { startTcpProxy, type TcpProxy } from "./tcpProxy.js";
export { folderBytes } from "./folderBytes.js";
export { overriding } from "./overriding.js";
export { PublicFronts } from "./publicFronts.js";
