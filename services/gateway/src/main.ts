import { connectNatsBus } from "@sched/bus";
import { loadConfigOrExit } from "@sched/config";
import { createLogger } from "@sched/logging";
import { commonConfigSchema, onShutdown, startHealthServer } from "@sched/runtime";
import { publicRoutes } from "@sched/proto";
import { startTelemetry, withHttpMetrics } from "@sched/telemetry";
import { createGatewayApp } from "./app.js";
import { Authenticator } from "./auth/authenticate.js";
import { gatewayConfigSchema } from "./config.js";
import { routeTemplateOf } from "./domain/routeMatch.js";
import { createGatewayServer } from "./http/server.js";
import { RedisIdempotencyStore } from "./idempotency/store.js";
import { RateLimits } from "./limits/rateLimits.js";
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
const authenticator = new Authenticator(bus, { cacheTtlMs: config.AUTH_CACHE_TTL_MS, timeoutMs: config.BUS_TIMEOUT_MS });
const revocations = await authenticator.listen();
const rateLimits = new RateLimits(
  {
    standardPerMinute: config.RATE_LIMIT_STANDARD_PER_MINUTE,
    aiPerMinute: config.RATE_LIMIT_AI_PER_MINUTE,
    authFailuresPerMinute: config.RATE_LIMIT_AUTH_FAILURES_PER_MINUTE,
    windowSeconds: config.RATE_LIMIT_WINDOW_SECONDS,
  },
  { redis, keyPrefix: common.BUS_NAMESPACE },
);
const app = createGatewayApp({
  bus,
  logger,
  routes: publicRoutes,
  authenticator,
  rateLimits,
  adminToken: config.ADMIN_TOKEN,
  busTimeoutMs: config.BUS_TIMEOUT_MS,
  trustProxy: config.TRUST_PROXY,
  idempotency: new RedisIdempotencyStore(redis, common.BUS_NAMESPACE),
  edge: { maxUrlBytes: config.MAX_URL_BYTES, maxInFlight: config.MAX_IN_FLIGHT },
});

const server = createGatewayServer(withHttpMetrics(app, routeTemplateOf(publicRoutes)), {
  maxHeaderBytes: config.MAX_HEADER_BYTES,
  headersTimeoutMs: config.HEADERS_TIMEOUT_MS,
  requestTimeoutMs: config.REQUEST_TIMEOUT_MS,
  keepAliveTimeoutMs: config.KEEP_ALIVE_TIMEOUT_MS,
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
  await revocations.stop();
  await bus.close();
  redis.disconnect();
  await health.close();
});
