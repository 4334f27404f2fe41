import { connectNatsBus } from "@sched/bus";
import { loadConfigOrExit } from "@sched/config";
import { databaseAnswers } from "@sched/db";
import { runProcess } from "@sched/process";
import type { z } from "zod";
import { commonConfigSchema } from "./commonConfig.js";
import type { ServiceModule } from "./service.js";
import { startModule } from "./startModule.js";

/** Well inside the probe's own time-out (2 s), so a slow database reads as not ready rather than a probe that timed out. */
const DATABASE_PROBE_TIMEOUT_MS = 1_000;

/**
 * Runs one service as its own process against NATS and Postgres, in the
 * process shell, started by startModule: migrate its schema, connect, serve,
 * and stop in order on SIGTERM: finish the pages it serves, stop taking
 * requests and finish those taken, stop consuming events, the service's own
 * stop (timers, the outbox relay), drain the NATS connection, close the pool.
 */
export async function runService<S extends z.ZodObject>(module: ServiceModule<S>): Promise<void> {
  await runProcess(module.name, commonConfigSchema.pick({ DATABASE_URL: true, DB_POOL_MAX: true, DB_STATEMENT_TIMEOUT_MS: true }), async (shell) => {
    const { config: database, process: common } = shell;
    // Asked on a connection of its own: a pool busy with requests is no reason to stop sending them.
    shell.ready("database", () => databaseAnswers(database.DATABASE_URL, DATABASE_PROBE_TIMEOUT_MS));
    await startModule(module, {
      database: { kind: "postgres", url: database.DATABASE_URL, poolMax: database.DB_POOL_MAX, statementTimeoutMs: database.DB_STATEMENT_TIMEOUT_MS },
      bus: { connect: () => connectNatsBus({ servers: common.NATS_URL, namespace: common.BUS_NAMESPACE, name: module.name, logger: shell.logger, streamReplicas: common.BUS_STREAM_REPLICAS }) },
      logger: shell.logger,
      settings: process.env,
      parseSettings: loadConfigOrExit,
      listenForPages: true,
      shell,
    });
  });
}
