import { connectNatsBus } from "@sched/bus";
import { loadConfigOrExit } from "@sched/config";
import { createLogger } from "@sched/logging";
import { commonConfigSchema, onShutdown } from "@sched/runtime";
import { publicRoutes } from "@sched/proto";
import { Redis } from "ioredis";
import { createGatewayApp } from "./app.js";
import { Authenticator } from "./auth/authenticate.js";
import { gatewayConfigSchema } from "./config.js";
import { RateLimits } from "./limits/rateLimits.js";

const common = loadConfigOrExit(commonConfigSchema.pick({ NATS_URL: true, BUS_NAMESPACE: true, LOG_LEVEL: true, SHUTDOWN_GRACE_MS: true }));
const config = loadConfigOrExit(gatewayConfigSchema);
const logger = createLogger({ name: "gateway", level: common.LOG_LEVEL });

const bus = await connectNatsBus({ servers: common.NATS_URL, namespace: common.BUS_NAMESPACE, name: "gateway", logger });
// No offline queue: while Redis is away the limiter's in-memory insurance answers at once.
const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
redis.on("error", (err) => logger.warn({ err: err.message }, "redis unavailable; rate limits fall back to this replica"));
const authenticator = new Authenticator(bus, { cacheTtlMs: config.AUTH_CACHE_TTL_MS, timeoutMs: config.BUS_TIMEOUT_MS });
const revocations = await authenticator.listen();
const rateLimits = new RateLimits(
  {
    standardPerMinute: config.RATE_LIMIT_STANDARD_PER_MINUTE,
    aiPerMinute: config.RATE_LIMIT_AI_PER_MINUTE,
    authFailuresPerMinute: config.RATE_LIMIT_AUTH_FAILURES_PER_MINUTE,
  },
  { redis, keyPrefix: common.BUS_NAMESPACE, logger },
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
});
const server = app.listen(config.PORT, () => logger.info({ port: config.PORT }, "gateway listening"));

onShutdown(logger, common.SHUTDOWN_GRACE_MS, async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await revocations.stop();
  await bus.close();
  redis.disconnect();
});
