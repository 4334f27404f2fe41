import { bind, MemoryBus } from "@sched/bus";
import { hashApiKey } from "@sched/ids";
import { createLogger } from "@sched/logging";
import { accountsAuthenticate, contactsDelete, contactsGet, publicRoutes, SCOPES, type Caller } from "@sched/proto";
import { clusterServersAvailable, REDIS_URL, uniqueSuffix } from "@sched/testing";
import { Redis } from "ioredis";
import { once } from "node:events";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGatewayApp } from "../src/inbound/http/app.js";
import { Authenticator } from "../src/outbound/keys/authenticator.js";
import { MemoryIdempotencyStore } from "../src/outbound/idempotency/store.js";
import { RateLimits } from "../src/outbound/rateLimits.js";
import { GATEWAY_DEFAULTS } from "../src/service.js";

const logger = createLogger({ name: "count-beside-test", level: "silent" });
const LIMIT = 40;
const settings = { standardPerMinute: 100, aiPerMinute: 10, authFailuresPerMinute: 30, windowSeconds: 60 };
const CONTACT = { id: "ctc_CountBeside000000000000", email: "bo@example.com", name: null, relationship: "colleague", blocked: false, addedAt: "2026-11-26T00:00:00Z" };

const redisUp = await clusterServersAvailable();

/**
 * Reads counted beside their forwarding (domain/countBeside.ts), through two
 * gateway replicas sharing one Redis, with a stand-in service that counts
 * what reaches it.
 */
describe.runIf(redisUp)("a read counted while it goes to its service", () => {
  const bus = new MemoryBus(logger);
  const clients: Redis[] = [];
  const reached = { get: 0, delete: 0 };
  let prefix: string;
  /** The callers accounts resolves, by key hash. */
  const callers = new Map<string, Caller>();

  /** A key of its own for each test, with a limit of 40 a minute. */
  const newKey = () => {
    const key = `sk_test_${String(callers.size + 1).padStart(40, "B")}`;
    callers.set(hashApiKey(key), callerOf(key));
    return key;
  };
  const callerOf = (key: string): Caller => ({
    userId: "usr_CountBeside0000000000000",
    email: "owner@example.com",
    timezone: "UTC",
    mode: "test",
    scopes: [...SCOPES],
    apiKeyId: `key_${key.slice(-24)}`,
    rateLimits: { standardPerMinute: LIMIT, aiPerMinute: null },
  });

  const replica = (redis: Redis) => {
    const rateLimits = new RateLimits(settings, { redis, keyPrefix: prefix });
    const app = createGatewayApp({
      bus,
      logger,
      routes: publicRoutes,
      authenticator: new Authenticator(bus, { cacheTtlMs: 60_000, timeoutMs: 2_000 }),
      rateLimits,
      adminToken: "adm_count_beside_test_token_000",
      busTimeoutMs: 2_000,
      trustProxy: "false",
      idempotency: new MemoryIdempotencyStore(),
      edge: GATEWAY_DEFAULTS,
    });
    return { app, rateLimits };
  };
  let a: ReturnType<typeof replica>;
  let b: ReturnType<typeof replica>;

  const get = (via: typeof a, key: string) => request(via.app).get(`/v1/contacts/${CONTACT.id}`).set("Authorization", `Bearer ${key}`);
  const remove = (via: typeof a, key: string) => request(via.app).delete(`/v1/contacts/${CONTACT.id}`).set("Authorization", `Bearer ${key}`);
  /** Another replica's requests, straight to the shared count, until the key has used `count` of its window. */
  const useUp = async (key: string, count: number) => {
    const other = new RateLimits(settings, { redis: clients[0]!, keyPrefix: prefix });
    for (let i = 0; i < count; i++) await other.consume("standard", callerOf(key)).catch(() => undefined);
  };
  const expectRefused = (res: request.Response) => {
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe("rate_limited");
    expect(res.headers["x-ratelimit-limit"]).toBe(String(LIMIT));
    expect(res.headers["x-ratelimit-remaining"]).toBe("0");
    expect(Number(res.headers["retry-after"])).toBeGreaterThanOrEqual(1);
  };

  beforeAll(async () => {
    prefix = `count_beside_${uniqueSuffix()}`;
    for (let i = 0; i < 2; i++) {
      const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
      clients.push(redis);
      await once(redis, "ready");
    }
    await bus.serve({ name: "stand-in", version: "1.0.0" }, [
      bind(accountsAuthenticate, async ({ keyHash }) => ({ caller: callers.get(keyHash)! })),
      bind(contactsGet, async () => {
        reached.get += 1;
        return { status: 200, body: CONTACT } as never;
      }),
      bind(contactsDelete, async () => {
        reached.delete += 1;
        return { status: 204 } as never;
      }),
    ]);
    a = replica(clients[0]!);
    b = replica(clients[1]!);
  });
  afterAll(async () => {
    await bus.close();
    for (const c of clients) c.disconnect();
  });

  it("forwards no read past the limit through two replicas, and refuses the rest with 429 and its headers", async () => {
    const key = newKey();
    reached.get = 0;
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT + 10; i++) {
      const res = await get(i % 2 === 0 ? a : b, key);
      statuses.push(res.status);
      if (res.status === 429) expectRefused(res);
      else expect(res.headers["x-ratelimit-remaining"]).toBe(String(LIMIT - 1 - i));
    }
    expect(statuses).toEqual([...Array<number>(LIMIT).fill(200), ...Array<number>(10).fill(429)]);
    expect(reached.get).toBe(LIMIT);
  });

  /**
   * A new key, resolved on replica a (its first request) and then counted
   * there as a known key (its second), which gives a the count its reads
   * are decided on; `usedBetween` requests of other replicas come between.
   */
  const countedOnA = async (usedBetween = 0) => {
    const key = newKey();
    expect((await get(a, key)).status).toBe(200);
    await useUp(key, usedBetween);
    expect((await get(a, key)).status).toBe(200);
    return key;
  };
  /** Other replicas take the key past its limit; then `send` is refused: how often did it reach the service? */
  const reachedPastLimit = async (key: string, send: () => Promise<request.Response>, endpoint: keyof typeof reached) => {
    reached[endpoint] = 0;
    await useUp(key, LIMIT);
    expectRefused(await send());
    return reached[endpoint];
  };

  it("answers 429 to a read whose key another replica took past its limit since this one last counted it, the service's answer dropped", async () => {
    const key = await countedOnA();
    // Counted here a moment ago well below its limit: forwarded while counted, and refused by the count.
    expect(await reachedPastLimit(key, () => get(a, key), "get")).toBe(1);
    // Counted past its limit now: counted first, and forwarded no more.
    expectRefused(await get(a, key));
    expectRefused(await get(a, key));
    expect(reached.get).toBe(1);
  });

  it("counts a write before it is forwarded, however far below its limit the key is", async () => {
    const key = await countedOnA();
    expect(await reachedPastLimit(key, () => remove(a, key), "delete")).toBe(0);
  });

  it("counts a read before it is forwarded when the key is within the margin of its limit", async () => {
    // 21 of 40 used at a's count: 19 left, fewer than the margin of 20.
    const near = await countedOnA(LIMIT / 2 - 1);
    expect(await reachedPastLimit(near, () => get(a, near), "get")).toBe(0);
    // 20 used: 20 left, the margin itself, and the read goes while it is counted.
    const atMargin = await countedOnA(LIMIT / 2 - 2);
    expect(await reachedPastLimit(atMargin, () => get(a, atMargin), "get")).toBe(1);
  });
});
