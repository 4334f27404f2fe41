import { connectNatsBus } from "@sched/bus";
import { loadConfigOrExit } from "@sched/config";
import { createLogger } from "@sched/logging";
import { commonConfigSchema, onShutdown, startHealthServer } from "@sched/runtime";
import { startTelemetry } from "@sched/telemetry";
import { assembleGateway } from "./assemble.js";
import { gatewayConfigSchema, settingsOf } from "./config.js";
import { RedisIdempotencyStore } from "./idempotency/store.js";
import { openRedis } from "./limits/redisLink.js";

const common = loadConfigOrExit(
  commonConfigSchema.pick({ NATS_URL: true, BUS_NAMESPACE: true, LOG_LEVEL: true, HEALTH_PORT: true, SHUTDOWN_GRACE_MS: true, SHUTDOWN_DELAY_MS: true }),
);
const config = loadConfigOrExit(gatewayConfigSchema);
const logger = createLogger({ name: "gateway", level: common.LOG_LEVEL });
await startTelemetry({ serviceName: "gateway" });

let stopping = false;
const bus = await connectNatsBus({ servers: common.NATS_URL, namespace: common.BUS_NAMESPACE, name: "gateway", logger });
// Redis is not a readiness condition: without it the limits fall back to this replica's memory.
const health = await startHealthServer({ port: common.HEALTH_PORT, logger, stopping: () => stopping, checks: async () => ({ bus: bus.isConnected() }) });
const redis = openRedis(config.REDIS_URL, logger);
const { server, background } = await assembleGateway({
  bus,
  logger,
  settings: settingsOf(config),
  redis,
  keyPrefix: common.BUS_NAMESPACE,
  idempotency: new RedisIdempotencyStore(redis, common.BUS_NAMESPACE),
});
server.listen(config.PORT, () => logger.info({ port: config.PORT }, "gateway listening"));

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

/**
 * Stops accepting connections and waits for the requests in progress; a
 * keep-alive connection is closed as soon as it is idle rather than when it
 * times out. What is still open at the deadline is cut.
 */
async function closeServer(deadline: number): Promise<void> {
  let closed = false;
  server.close(() => (closed = true));
  while (!closed && Date.now() < deadline) {
    server.closeIdleConnections();
    await sleep(50);
  }
  server.closeAllConnections();
}

onShutdown(logger, common.SHUTDOWN_GRACE_MS, async (deadline) => {
  stopping = true;
  // Readiness is false now; the load balancer needs a moment to stop sending requests here.
  await sleep(Math.min(common.SHUTDOWN_DELAY_MS, deadline - Date.now()));
  await closeServer(deadline);
  await background.stop();
  await bus.close();
  redis.disconnect();
  await health.close();
});
