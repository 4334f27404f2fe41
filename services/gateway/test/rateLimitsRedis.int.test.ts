import { clusterServersAvailable, REDIS_URL, startRedisServer, uniqueSuffix } from "@sched/testing";
import { Redis } from "ioredis";
import { once } from "node:events";
import { afterAll, describe, expect, it } from "vitest";
import { RateLimitedError, RateLimits } from "../src/outbound/rateLimits.js";

const settings = { standardPerMinute: 5, aiPerMinute: 2, authFailuresPerMinute: 3, windowSeconds: 60 };
const caller = (apiKeyId: string) => ({ apiKeyId });
const clients: Redis[] = [];
afterAll(() => {
  for (const c of clients) c.disconnect();
});
/** Connected, as the gateway's is (openRedis: no offline queue, so a command before the connection fails at once). */
const redisAt = async (url: string) => {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  redis.on("error", () => undefined);
  clients.push(redis);
  if (redis.status !== "ready") await once(redis, "ready");
  return redis;
};

describe.runIf(await clusterServersAvailable())("a known key's count and address check in one Redis command", () => {
  it("counts on the same keys as consume, shared by replicas, and reads the address's failures as authFailuresExhausted does", async () => {
    const keyPrefix = `rl_${uniqueSuffix()}`;
    const [one, two] = [new RateLimits(settings, { redis: await redisAt(REDIS_URL), keyPrefix }), new RateLimits(settings, { redis: await redisAt(REDIS_URL), keyPrefix })];
    expect((await one.consumeKnown("standard", caller("key_a"), "10.0.0.1")).counted).toMatchObject({ limit: 5, remaining: 4 });
    expect(await two.consume("standard", caller("key_a"))).toMatchObject({ remaining: 3 });
    const third = await two.consumeKnown("standard", caller("key_a"), "10.0.0.1");
    expect(third.counted.remaining).toBe(2);
    expect(third.counted.msBeforeReset).toBeGreaterThan(50_000);
    expect(third.authFailuresExhausted).toBeUndefined();
    for (let i = 0; i < 3; i++) await one.recordAuthFailure("10.0.0.1");
    const refused = await one.consumeKnown("standard", caller("key_a"), "10.0.0.1");
    const asGet = await two.authFailuresExhausted("10.0.0.1");
    expect(refused.authFailuresExhausted).toMatchObject({ limit: 3, remaining: 0 });
    expect(asGet).toMatchObject({ limit: 3, remaining: 0 });
    expect(Math.abs(refused.authFailuresExhausted!.msBeforeReset - asGet!.msBeforeReset)).toBeLessThan(5_000);
    expect((await one.consumeKnown("standard", caller("key_a"), "10.0.0.2")).counted.remaining).toBe(0);
    const past = await one.consumeKnown("standard", caller("key_a"), "10.0.0.2").catch((err: unknown) => err);
    expect(past).toBeInstanceOf(RateLimitedError);
    expect((past as RateLimitedError).state).toMatchObject({ limit: 5, remaining: 0 });
  });

  it("counts in Redis when Redis has lost the script (restarted or flushed): the script itself is sent again", async () => {
    const server = await startRedisServer();
    const url = `redis://127.0.0.1:${server.port}`;
    try {
      const keyPrefix = `rl_${uniqueSuffix()}`;
      const [one, two] = [new RateLimits(settings, { redis: await redisAt(url), keyPrefix }), new RateLimits(settings, { redis: await redisAt(url), keyPrefix })];
      expect((await one.consumeKnown("standard", caller("key_c"), "10.0.0.4")).counted.remaining).toBe(4);
      await (await redisAt(url)).script("FLUSH");
      expect((await one.consumeKnown("standard", caller("key_c"), "10.0.0.4")).counted.remaining).toBe(3);
      // Counted in Redis, not in the replica's memory: the other replica sees both.
      expect((await two.consumeKnown("standard", caller("key_c"), "10.0.0.4")).counted.remaining).toBe(2);
    } finally {
      await server.kill();
    }
  });

  it("counts in this replica's memory while Redis is away, as consume does", async () => {
    const server = await startRedisServer();
    const redis = await redisAt(`redis://127.0.0.1:${server.port}`);
    const limits = new RateLimits(settings, { redis, keyPrefix: `rl_${uniqueSuffix()}` });
    expect((await limits.consumeKnown("ai", caller("key_b"), "10.0.0.3")).counted.remaining).toBe(1);
    await server.kill();
    expect((await limits.consumeKnown("ai", caller("key_b"), "10.0.0.3")).counted.remaining).toBe(1);
    await expect(limits.consumeKnown("ai", caller("key_b"), "10.0.0.3").then(() => limits.consumeKnown("ai", caller("key_b"), "10.0.0.3"))).rejects.toBeInstanceOf(RateLimitedError);
  });
});
