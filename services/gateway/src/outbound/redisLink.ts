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
 * The commands of one pass of the event loop leave in one write: the socket
 * is corked at the first and uncorked in the pass's check phase
 * (`setImmediate`), after every connection found readable in that pass has
 * been served, so the commands of requests arriving together share the
 * write. ioredis's auto-pipelining gathers them too, but builds a Pipeline
 * for every batch (the defined scripts' methods copied onto it, a promise, a
 * callback a command, each reply handed on in a tick of its own) and sends
 * the next batch only once the last is answered: 75 against 46 µs of CPU a
 * rate-limit command when requests come one at a time (docs/benchmarks.md).
 * Only a ready client's own commands cork; a pipeline's or the handshake's
 * go as ioredis writes them, and a command ioredis refuses is refused at once
 * as before. Each pass's cork is undone by its own immediate, on the socket
 * it was put on, so a reconnect in between leaves no socket corked.
 */
function oneWritePerPass(redis: Redis): void {
  const send = redis.sendCommand.bind(redis);
  let corked: Redis["stream"] | undefined;
  const uncork = () => {
    corked?.uncork();
    corked = undefined;
  };
  redis.sendCommand = (command, stream) => {
    if (corked === undefined && stream === undefined && redis.status === "ready") {
      corked = redis.stream;
      corked.cork();
      setImmediate(uncork);
    }
    return send(command, stream);
  };
}

/**
 * The gateway's Redis client. No offline queue and one retry: while Redis is
 * away a command fails at once and the in-memory insurance answers, so no
 * request waits on a reconnect. Commands issued in one pass of the event
 * loop (a request's checks, or those of requests arriving together) share one
 * write.
 */
export function openRedis(url: string, logger: Logger): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  oneWritePerPass(redis);
  watchRedis(redis, logger);
  return redis;
}
