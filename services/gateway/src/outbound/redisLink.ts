import type { Logger } from "@sched/logging";
import { Redis } from "ioredis";

/**
 * Logs once when Redis goes away and once when it is back, rather than on
 * every failed reconnect: while it is away each replica limits on its own
 * memory (looser by the number of replicas) and idempotency is left to the
 * services, which operators should know, but not a thousand times a minute.
 */
function watchRedis(redis: Redis, logger: Logger): void {
  // Starting unreachable is logged like losing it; the first connect is not news.
  let available = true;
  const lost = (reason: string) => {
    if (!available) return;
    available = false;
    logger.warn({ reason }, "redis unavailable: until it is back, rate limits count per replica and POSTs pass without the gateway's idempotency records");
  };
  redis.on("error", (err: Error) => lost(err.message));
  redis.on("close", () => lost("connection closed"));
  redis.on("ready", () => {
    if (available) return;
    available = true;
    logger.info("redis available: rate limits and idempotency keys are shared by every replica again");
  });
}

/**
 * The gateway's Redis client. No offline queue and one retry: while Redis is
 * away a command fails at once and the in-memory insurance answers, so no
 * request waits on a reconnect. Commands issued in one tick (a request's
 * checks, or those of requests arriving together) share one write.
 */
export function openRedis(url: string, logger: Logger): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, enableAutoPipelining: true });
  watchRedis(redis, logger);
  return redis;
}
