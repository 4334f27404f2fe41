import { connectNatsBus, type Stoppable } from "@sched/bus";
import { loadConfigOrExit } from "@sched/config";
import { databaseAnswers, openSchema, type Knex } from "@sched/db";
import { createLogger, type Logger } from "@sched/logging";
import { startTelemetry } from "@sched/telemetry";
import type { z } from "zod";
import { createServer, type Server } from "node:http";
import { commonConfigSchema } from "./commonConfig.js";
import { startHealthServer } from "./health.js";
import type { ServiceHttp, ServiceModule } from "./service.js";
import { onShutdown } from "./shutdown.js";
import { TrackedBus } from "./trackedBus.js";

/** Well inside the probe's own time-out (2 s), so a slow database reads as not ready rather than a probe that timed out. */
const DATABASE_PROBE_TIMEOUT_MS = 1_000;

/**
 * Runs one service as its own process against NATS and Postgres: parse the
 * environment (or exit naming the bad variable), answer probes on
 * HEALTH_PORT, migrate its schema, serve, and stop gracefully on SIGTERM.
 */
export async function runService<S extends z.ZodObject>(module: ServiceModule<S>): Promise<void> {
  const common = loadConfigOrExit(commonConfigSchema);
  const config = loadConfigOrExit(module.config);
  const logger = createLogger({ name: module.name, level: common.LOG_LEVEL });
  await startTelemetry({ serviceName: module.name });

  // Filled in as start-up goes: probes and a shutdown that come early see what exists so far.
  const parts: { db?: Knex; bus?: TrackedBus; service?: Stoppable; server?: Server; migrated: boolean; stopping: boolean } = { migrated: false, stopping: false };
  const health = await startHealthServer({
    port: common.HEALTH_PORT,
    logger,
    stopping: () => parts.stopping,
    checks: async () => ({
      migrations: parts.migrated,
      bus: parts.bus?.isConnected() ?? false,
      // Asked on a connection of its own: a pool busy with requests is no reason to stop sending them.
      database: parts.db ? await databaseAnswers(common.DATABASE_URL, DATABASE_PROBE_TIMEOUT_MS) : false,
    }),
  });

  // Registered before start-up work, so a SIGTERM during migrations also ends cleanly.
  onShutdown(logger, common.SHUTDOWN_GRACE_MS, async (deadline) => {
    parts.stopping = true;
    await sleep(Math.min(common.SHUTDOWN_DELAY_MS, deadline - Date.now()));
    await stopInOrder({ ...parts, logger, deadline });
    await health.close();
  });

  const db = await openSchema({ kind: "postgres", url: common.DATABASE_URL, poolMax: common.DB_POOL_MAX }, module.schema, module.migrations);
  parts.db = db;
  parts.migrated = true;
  const bus = new TrackedBus(await connectNatsBus({ servers: common.NATS_URL, namespace: common.BUS_NAMESPACE, name: module.name, logger, streamReplicas: common.BUS_STREAM_REPLICAS }));
  parts.bus = bus;
  const service = await module.start({ bus, db, logger, config });
  parts.service = service;
  if (service.http) parts.server = await listen(service.http.handler, service.http.port, logger);
  logger.info("service started");
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

/**
 * The shutdown order: stop taking requests and finish those taken, stop
 * consuming events, the service's own stop (timers, the outbox relay),
 * drain the NATS connection, close the pool. Waiting on in-flight work is
 * bounded by the deadline; what is left then is cut short.
 */
async function stopInOrder(parts: { bus?: TrackedBus; service?: Stoppable; server?: Server; db?: Knex; logger: Logger; deadline: number }): Promise<void> {
  const { bus, service, server, db, logger, deadline } = parts;
  let failed = false;
  const step = async (name: string, work: () => Promise<void>) => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), Math.max(0, deadline - Date.now()))));
    const finished = work().then(
      () => "done" as const,
      (err: unknown) => {
        logger.error({ err, step: name }, "shutdown step failed");
        failed = true;
        return "failed" as const;
      },
    );
    const outcome = await Promise.race([finished, late]);
    clearTimeout(timer);
    if (outcome === "late") logger.warn({ step: name }, "shutdown step cut short at the deadline");
  };
  if (server) await step("finish pages", () => closeServer(server));
  if (bus) await step("finish requests", () => bus.stopServing());
  if (bus) await step("stop consumers", () => bus.stopConsuming());
  if (service) await step("stop service", () => service.stop());
  if (bus) await step("drain bus", () => bus.close());
  if (db) await step("close pool", () => db.destroy());
  if (failed) throw new Error("a shutdown step failed");
}

/** Serves a service's own pages on their port (every interface: they are reached from outside the pod). */
async function listen(handler: ServiceHttp["handler"], port: number, logger: Logger): Promise<Server> {
  const server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, () => resolve());
  });
  logger.info({ port }, "pages listening");
  return server;
}

/** Stops taking connections and waits for the requests in progress, closing idle keep-alive connections at once. */
function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}
