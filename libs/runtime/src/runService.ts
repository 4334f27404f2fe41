import { connectNatsBus } from "@sched/bus";
import { loadConfigOrExit } from "@sched/config";
import { openSchema } from "@sched/db";
import { createLogger } from "@sched/logging";
import type { z } from "zod";
import { commonConfigSchema } from "./commonConfig.js";
import type { ServiceModule } from "./service.js";
import { onShutdown } from "./shutdown.js";

/**
 * Runs one service as its own process against NATS and Postgres: parse the
 * environment (or exit naming the bad variable), migrate its schema, serve,
 * and on SIGTERM stop taking work, drain the bus and close the pool.
 */
export async function runService<S extends z.ZodObject>(module: ServiceModule<S>): Promise<void> {
  const common = loadConfigOrExit(commonConfigSchema);
  const config = loadConfigOrExit(module.config);
  const logger = createLogger({ name: module.name, level: common.LOG_LEVEL });
  const db = await openSchema({ kind: "postgres", url: common.DATABASE_URL, poolMax: common.DB_POOL_MAX }, module.schema, module.migrations);
  const bus = await connectNatsBus({ servers: common.NATS_URL, namespace: common.BUS_NAMESPACE, name: module.name, logger });
  const service = await module.start({ bus, db, logger, config });
  logger.info("service started");
  onShutdown(logger, common.SHUTDOWN_GRACE_MS, async () => {
    await service.stop();
    await bus.close();
    await db.destroy();
  });
}
