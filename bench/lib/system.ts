import { connectNatsBus, type Bus } from "@sched/bus";
import { openSchema, type Knex } from "@sched/db";
import { createLogger } from "@sched/logging";
import { serviceModules, System } from "@sched/standalone";
import { clusterServersAvailable, createTestDatabase, deleteNamespaceStreams, NATS_URL, REDIS_URL, startGatewayProcess, startServiceProcess, uniqueSuffix, type ServiceProcess } from "@sched/testing";
import { randomBytes } from "node:crypto";
import type { ObservedThread } from "./load.js";

/**
 * `cluster`: real NATS, Postgres and Redis, every service and the gateway in
 * this one process; `processes`: the same, each service and the gateway a
 * process of its own, as `npm run cluster` and production run them;
 * `standalone`: the in-process bus and in-memory PGlite.
 */
export type WiringKind = "cluster" | "processes" | "standalone";

export interface BenchSystem {
  kind: WiringKind;
  /** http://127.0.0.1:<ephemeral port> */
  url: string;
  adminToken: string;
  /** A service's own schema, for seeding. */
  database(service: string): Knex;
  /** The bus as a service sees it, for timing one endpoint alone. */
  bus: Bus;
  /** The embedded database's thread (the standalone wiring only), for its busy share. */
  databaseThread?: ObservedThread;
  /** Operating-system process ids by service name (the processes wiring only), for reading their CPU time. */
  pids?: ReadonlyMap<string, number>;
  /** Stops the system and removes what it created: the database and the streams. */
  stop(): Promise<void>;
}

/** What a benchmark may ask of the system it starts. */
export interface BenchSystemOptions {
  /** More options for node by service name, in the processes wiring (`--cpu-prof`). */
  nodeArgs?: Record<string, string[]>;
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
export async function startBenchSystem(kind: WiringKind, options: BenchSystemOptions = {}): Promise<BenchSystem> {
  const logger = createLogger({ name: "bench", level: "error" });
  const adminToken = `adm_bench_${randomBytes(16).toString("hex")}`;
  if (kind === "standalone") {
    const system = await new System({ wiring: { kind: "standalone" }, logger, port: 0, adminToken }).start();
    return {
      kind,
      url: system.url,
      adminToken,
      database: (name) => system.database(name),
      bus: system.bus,
      ...(system.embeddedDatabase ? { databaseThread: system.embeddedDatabase.pglite } : {}),
      stop: once(() => system.stop()),
    };
  }
  if (kind === "processes") return startProcesses(adminToken, options);
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
  const started = system;
  return { kind, url: started.url, adminToken, database: (name) => started.database(name), bus: started.bus, stop };
}

/** Every service and the gateway as child processes on a fresh database and namespace, each ready when its probe says so. */
async function startProcesses(adminToken: string, options: BenchSystemOptions): Promise<BenchSystem> {
  if (!(await clusterServersAvailable())) throw new Error("the processes wiring needs Postgres, NATS and Redis on their standard local ports");
  const logger = createLogger({ name: "bench", level: "error" });
  const database = await createTestDatabase();
  const namespace = `bench${uniqueSuffix()}`;
  const processes: ServiceProcess[] = [];
  const schemas: Knex[] = [];
  let bus: Bus | undefined;
  const stop = once(async () => {
    await Promise.all(processes.map((p) => p.kill("SIGTERM")));
    await bus?.close();
    await Promise.all(schemas.map((db) => db.destroy()));
    await database.drop();
    await deleteNamespaceStreams(NATS_URL, namespace);
  });
  try {
    // The dashboard's page is not measured: any free port, so that two runs on one machine do not collide.
    const env = { NATS_URL, DATABASE_URL: database.url, REDIS_URL, BUS_NAMESPACE: namespace, ADMIN_TOKEN: adminToken, LOG_LEVEL: "error", DASHBOARD_PORT: "0" };
    // Every start is awaited, failed or not, so a failure stops the processes that did start.
    const starts = await Promise.allSettled(
      [
        ...serviceModules.map((m) => startServiceProcess(m.name, { ...m.standaloneEnv, ...env }, { nodeArgs: options.nodeArgs?.[m.name] ?? [] })),
        startGatewayProcess(env, { nodeArgs: options.nodeArgs?.gateway ?? [] }),
      ],
    );
    for (const s of starts) if (s.status === "fulfilled") processes.push(s.value);
    const failed = starts.find((s) => s.status === "rejected");
    if (failed) throw failed.reason;
    bus = await connectNatsBus({ servers: NATS_URL, namespace, name: "bench", logger });
    const byName = new Map<string, Knex>();
    for (const module of serviceModules) {
      const db = await openSchema({ kind: "postgres", url: database.url, poolMax: 4 }, module.schema, module.migrations);
      schemas.push(db);
      byName.set(module.name, db);
    }
    const names = [...serviceModules.map((m) => m.name), "gateway"];
    return {
      kind: "processes",
      url: processes.at(-1)!.url,
      pids: new Map(processes.map((p, i) => [names[i]!, p.pid])),
      adminToken,
      database: (name) => {
        const db = byName.get(name);
        if (!db) throw new Error(`no service ${name}`);
        return db;
      },
      bus,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
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
