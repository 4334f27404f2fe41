import { connectNatsBus } from "@sched/bus";
import { loadConfigOrExit } from "@sched/config";
import { databaseAnswers, openSchema } from "@sched/db";
import type { Logger } from "@sched/logging";
import { closeHttpServer, runProcess } from "@sched/process";
import { createServer, type Server } from "node:http";
import type { z } from "zod";
import { commonConfigSchema } from "./commonConfig.js";
import type { ServiceHttp, ServiceModule } from "./service.js";
import { TrackedBus } from "./trackedBus.js";

/** Well inside the probe's own time-out (2 s), so a slow database reads as not ready rather than a probe that timed out. */
const DATABASE_PROBE_TIMEOUT_MS = 1_000;

/**
 * Runs one service as its own process against NATS and Postgres, in the
 * process shell: migrate its schema, serve, and stop in order on SIGTERM:
 * finish the pages it serves, stop taking requests and finish those taken,
 * stop consuming events, the service's own stop (timers, the outbox relay),
 * drain the NATS connection, close the pool.
 */
export async function runService<S extends z.ZodObject>(module: ServiceModule<S>): Promise<void> {
  await runProcess(module.name, commonConfigSchema.pick({ DATABASE_URL: true, DB_POOL_MAX: true }), async (shell) => {
    const { config: database, process: common } = shell;
    const config = loadConfigOrExit(module.config);
    let migrated = false;
    shell.ready("migrations", () => migrated);
    // Asked on a connection of its own: a pool busy with requests is no reason to stop sending them.
    shell.ready("database", () => databaseAnswers(database.DATABASE_URL, DATABASE_PROBE_TIMEOUT_MS));

    const db = await openSchema({ kind: "postgres", url: database.DATABASE_URL, poolMax: database.DB_POOL_MAX }, module.schema, module.migrations);
    shell.onStop("close pool", () => db.destroy());
    migrated = true;

    const bus = new TrackedBus(await connectNatsBus({ servers: common.NATS_URL, namespace: common.BUS_NAMESPACE, name: module.name, logger: shell.logger, streamReplicas: common.BUS_STREAM_REPLICAS }));
    shell.onStop("drain bus", () => bus.close());
    shell.ready("bus", () => bus.isConnected());
    shell.ready("endpoints", () => bus.isServing());

    const service = await module.start({ bus, db, logger: shell.logger, config });
    shell.onStop("stop service", () => service.stop());
    shell.onStop("stop consumers", () => bus.stopConsuming());
    shell.onStop("finish requests", () => bus.stopServing());
    if (service.http) {
      const server = await listen(service.http.handler, service.http.port, shell.logger);
      shell.onStop("finish pages", (deadline) => closeHttpServer(server, deadline));
    }
  });
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
