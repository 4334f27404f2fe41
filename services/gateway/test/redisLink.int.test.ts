import { createLogger } from "@sched/logging";
import { clusterServersAvailable, REDIS_URL, startRedisServer, uniqueSuffix } from "@sched/testing";
import type { Redis } from "ioredis";
import { once } from "node:events";
import { afterAll, describe, expect, it } from "vitest";
import { openRedis } from "../src/outbound/redisLink.js";

const logger = createLogger({ name: "redis-link-test", level: "silent" });
const clients: Redis[] = [];
afterAll(() => {
  for (const c of clients) c.disconnect();
});
const opened = async (url: string) => {
  const redis = openRedis(url, logger);
  clients.push(redis);
  if (redis.status !== "ready") await once(redis, "ready");
  return redis;
};

/** Counts the writes reaching the client's socket (one `_write` or `_writev` each). */
function countWrites(redis: Redis): () => number {
  const socket = redis.stream as typeof redis.stream & { _write: (...args: unknown[]) => void; _writev?: (...args: unknown[]) => void };
  let writes = 0;
  const write = socket._write.bind(socket);
  socket._write = (...args) => {
    writes++;
    write(...args);
  };
  const writev = socket._writev?.bind(socket);
  if (writev) {
    socket._writev = (...args) => {
      writes++;
      writev(...args);
    };
  }
  return () => writes;
}

describe.runIf(await clusterServersAvailable())("the gateway's Redis client", () => {
  it("sends the commands of one pass of the event loop in one write and answers each in order", async () => {
    const redis = await opened(REDIS_URL);
    const key = `rlink_${uniqueSuffix()}`;
    const writes = countWrites(redis);
    const replies = await Promise.all([redis.set(key, "1", "EX", 60), redis.incr(key), redis.incrby(key, 5), redis.get(key), redis.pttl(key)]);
    expect(replies.slice(0, 4)).toEqual(["OK", 2, 7, "7"]);
    expect(replies[4]).toBeGreaterThan(50_000);
    expect(writes()).toBe(1);
    // A later pass's command is a write of its own, sent without waiting for anything else.
    expect(await redis.del(key)).toBe(1);
    expect(writes()).toBe(2);
    expect(redis.stream.writableCorked).toBe(0);
  });

  it("gathers the commands of separate callbacks of one pass, as of requests arriving together", async () => {
    const redis = await opened(REDIS_URL);
    const key = `rlink_${uniqueSuffix()}`;
    const writes = countWrites(redis);
    const inCallback = () => new Promise<number>((resolve, reject) => setImmediate(() => redis.incr(key).then(resolve, reject)));
    expect(await Promise.all([inCallback(), inCallback(), inCallback()])).toEqual([1, 2, 3]);
    expect(writes()).toBe(1);
    await redis.del(key);
  });

  it("sends each pass's commands while earlier ones are unanswered", async () => {
    const redis = await opened(REDIS_URL);
    const key = `rlink_${uniqueSuffix()}`;
    const writes = countWrites(redis);
    const first = redis.incr(key);
    await new Promise((resolve) => setImmediate(resolve));
    const second = redis.incr(key);
    expect(await Promise.all([first, second])).toEqual([1, 2]);
    expect(writes()).toBe(2);
    await redis.del(key);
  });

  it("fails a command at once while Redis is away", async () => {
    const server = await startRedisServer();
    const redis = await opened(`redis://127.0.0.1:${server.port}`);
    const key = `rlink_${uniqueSuffix()}`;
    expect(await redis.incr(key)).toBe(1);
    await server.kill();
    const started = Date.now();
    await expect(redis.incr(key)).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
