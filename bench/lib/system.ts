import { createLogger } from "@sched/logging";
import { System } from "@sched/standalone";
import { clusterServersAvailable, createTestDatabase, deleteNamespaceStreams, NATS_URL, REDIS_URL, uniqueSuffix } from "@sched/testing";
import { randomBytes } from "node:crypto";

export type WiringKind = "cluster" | "standalone";

export interface BenchSystem {
  kind: WiringKind;
  system: System;
  /** http://127.0.0.1:<ephemeral port> */
  url: string;
  adminToken: string;
  /** Stops the system and removes what it created: the database and the streams. */
  stop(): Promise<void>;
}

/** Systems still running: an interrupted run removes what it created before it exits. */
const running = new Set<() => Promise<void>>();
let interrupted = false;
process.once("SIGINT", () => {
  if (interrupted) return;
  interrupted = true;
  console.error("\ninterrupted: stopping and cleaning up");
  void Promise.allSettled([...running].map((stop) => stop())).then(() => process.exit(130));
});

/**
 * The whole system in this process on an ephemeral port: cluster wiring
 * against the local NATS (its own namespace), a fresh Postgres database and
 * Redis; or standalone wiring (in-process bus, in-memory PGlite).
 */
export async function startBenchSystem(kind: WiringKind): Promise<BenchSystem> {
  const logger = createLogger({ name: "bench", level: "error" });
  const adminToken = `adm_bench_${randomBytes(16).toString("hex")}`;
  if (kind === "standalone") {
    const system = await new System({ wiring: { kind: "standalone" }, logger, port: 0, adminToken }).start();
    return { kind, system, url: system.url, adminToken, stop: once(() => system.stop()) };
  }
  if (!(await clusterServersAvailable())) throw new Error("cluster wiring needs Postgres, NATS and Redis on their standard local ports");
  const database = await createTestDatabase();
  const namespace = `bench${uniqueSuffix()}`;
  let system: System | undefined;
  const stop = once(async () => {
    await system?.stop();
    await database.drop();
    await deleteNamespaceStreams(NATS_URL, namespace);
  });
  try {
    system = await new System({
      wiring: { kind: "cluster", natsUrl: NATS_URL, databaseUrl: database.url, redisUrl: REDIS_URL, namespace },
      logger,
      port: 0,
      adminToken,
    }).start();
  } catch (err) {
    await stop();
    throw err;
  }
  return { kind, system, url: system.url, adminToken, stop };
}

/** `stop` runs once however often it is called, and is tracked until it has run. */
function once(stop: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  const tracked = () => {
    done ??= stop().finally(() => running.delete(tracked));
    return done;
  };
  running.add(tracked);
  return tracked;
}
