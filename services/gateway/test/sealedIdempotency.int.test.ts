import { bind, MemoryBus } from "@sched/bus";
import { createLogger } from "@sched/logging";
import { accountsAuthenticate, publicRoutes, SCOPES, webhookEndpointsCreate, type Caller } from "@sched/proto";
import { clusterServersAvailable, REDIS_URL, uniqueSuffix } from "@sched/testing";
import { Redis } from "ioredis";
import { randomBytes } from "node:crypto";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGatewayApp } from "../src/inbound/http/app.js";
import { Authenticator } from "../src/outbound/keys/authenticator.js";
import { GATEWAY_DEFAULTS } from "../src/service.js";
import { ReplyCipher } from "../src/outbound/idempotency/replyCipher.js";
import { idempotencyRedisKey, RedisIdempotencyStore } from "../src/outbound/idempotency/store.js";
import { RateLimits } from "../src/outbound/rateLimits.js";

const logger = createLogger({ name: "sealed-idempotency-test", level: "silent" });
const KEY = `sk_test_${"S".repeat(40)}`;
const caller: Caller = { userId: "usr_SealedRecords0000000000", email: "owner@example.com", timezone: "UTC", mode: "test", scopes: [...SCOPES], apiKeyId: "key_SealedRecords0000000000" };
const ENDPOINT_URL = "https://receiver.example.com/hooks/sealed";

const redisUp = await clusterServersAvailable();

describe.runIf(redisUp)("Idempotency-Key records in Redis hold the reply sealed", () => {
  const prefix = `sealed_${uniqueSuffix()}`;
  const bus = new MemoryBus(logger);
  let redis: Redis;
  /** Every secret the stand-in webhooks service has made, in order. */
  const secrets: string[] = [];

  /** A gateway replica sharing Redis under `prefix`, sealing with `key`. */
  const gatewayWith = (key: Buffer) =>
    createGatewayApp({
      bus,
      logger,
      routes: publicRoutes,
      authenticator: new Authenticator(bus, { cacheTtlMs: 1_000, timeoutMs: 2_000 }),
      rateLimits: new RateLimits({ standardPerMinute: 1_000, aiPerMinute: 10, authFailuresPerMinute: 30, windowSeconds: 60 }, { keyPrefix: prefix }),
      adminToken: "adm_sealed_idempotency_test_token",
      busTimeoutMs: 2_000,
      trustProxy: "false",
      idempotency: new RedisIdempotencyStore(redis, prefix, new ReplyCipher(key)),
      edge: GATEWAY_DEFAULTS,
    });
  const create = (app: ReturnType<typeof gatewayWith>, idempotencyKey: string) =>
    request(app).post("/v1/webhook-endpoints").set("Authorization", `Bearer ${KEY}`).set("Idempotency-Key", idempotencyKey).send({ url: ENDPOINT_URL });
  const storedValues = async () => {
    const keys = await redis.keys(idempotencyRedisKey(prefix, "*"));
    return Promise.all(keys.map(async (k) => (await redis.get(k))!));
  };

  beforeAll(async () => {
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    await bus.serve({ name: "stand-in", version: "1.0.0" }, [
      bind(accountsAuthenticate, async () => ({ caller })),
      bind(webhookEndpointsCreate, async () => {
        const secret = `whsec_${randomBytes(24).toString("base64url")}`;
        secrets.push(secret);
        const id = `whe_${randomBytes(12).toString("hex")}`;
        return { status: 201, body: { id, url: ENDPOINT_URL, events: ["*"], description: "", enabled: true, mode: "test", createdAt: new Date().toISOString(), secret } };
      }),
    ]);
  });
  afterAll(async () => {
    const keys = await redis?.keys(`${prefix}:*`);
    if (keys?.length) await redis.del(...keys);
    await redis?.quit();
    await bus.close();
  });

  it("keeps neither the secret nor the reply in clear, and a retry still gets the identical reply, secret included", async () => {
    const app = gatewayWith(randomBytes(32));
    const first = await create(app, "sealed-1");
    expect(first.status).toBe(201);
    expect(first.body.secret).toBe(secrets.at(-1));

    const [stored, ...others] = await storedValues();
    expect(others).toEqual([]);
    for (const clear of [first.body.secret as string, first.body.id as string, ENDPOINT_URL, JSON.stringify(first.body)]) expect(stored).not.toContain(clear);
    // What the settling scripts compare stays readable; the reply is only there sealed.
    const record = JSON.parse(stored!) as Record<string, unknown>;
    expect(Object.keys(record).sort()).toEqual(["fingerprint", "sealed", "state", "token"]);
    expect(record.state).toBe("done");
    expect(record.sealed).toMatch(/^v1\.[A-Za-z0-9+/=]+\.[A-Za-z0-9+/=]+$/);

    const made = secrets.length;
    const again = await create(app, "sealed-1");
    expect(again.status).toBe(201);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.body).toEqual(first.body);
    expect(secrets).toHaveLength(made);
  });

  it("seals each record with a nonce of its own: two equal replies rest as different texts", async () => {
    const key = randomBytes(32);
    const reply = { status: 201, body: { secret: "whsec_same" } };
    const store = new RedisIdempotencyStore(redis, `${prefix}_nonce`, new ReplyCipher(key));
    for (const id of ["a", "b"]) {
      await store.claim(id, { state: "in_progress", fingerprint: "f", token: `t${id}` }, 10_000);
      await store.complete(id, { state: "done", fingerprint: "f", token: `t${id}`, reply }, 60_000);
    }
    const [a, b] = await Promise.all(["a", "b"].map(async (id) => JSON.parse((await redis.get(idempotencyRedisKey(`${prefix}_nonce`, id)))!) as { sealed: string }));
    expect(a!.sealed).not.toBe(b!.sealed);
    await redis.del(idempotencyRedisKey(`${prefix}_nonce`, "a"), idempotencyRedisKey(`${prefix}_nonce`, "b"));
  });

  it("reads a record sealed under another key as absent: the request runs again, and its new reply is kept instead", async () => {
    const before = gatewayWith(randomBytes(32));
    const first = await create(before, "rotated-1");
    expect(first.status).toBe(201);
    const made = secrets.length;

    // The key was rotated: a replica with the new key cannot open the record.
    const after = gatewayWith(randomBytes(32));
    const retried = await create(after, "rotated-1");
    expect(retried.status).toBe(201);
    expect(retried.headers["idempotent-replayed"]).toBeUndefined();
    expect(secrets).toHaveLength(made + 1);
    expect(retried.body.secret).toBe(secrets.at(-1));
    expect(retried.body.secret).not.toBe(first.body.secret);

    const replayed = await create(after, "rotated-1");
    expect(replayed.headers["idempotent-replayed"]).toBe("true");
    expect(replayed.body).toEqual(retried.body);
    expect(secrets).toHaveLength(made + 1);
  });

  it("reads a record whose reply is in clear as absent, and replaces it", async () => {
    const store = new RedisIdempotencyStore(redis, `${prefix}_clear`, new ReplyCipher(randomBytes(32)));
    const clear = { state: "done", fingerprint: "f", token: "t0", reply: { status: 201, body: { secret: "whsec_in_clear" } } };
    await redis.set(idempotencyRedisKey(`${prefix}_clear`, "k"), JSON.stringify(clear), "PX", 60_000);
    expect(await store.claim("k", { state: "in_progress", fingerprint: "f", token: "t1" }, 10_000)).toBeUndefined();
    expect(await redis.get(idempotencyRedisKey(`${prefix}_clear`, "k"))).not.toContain("whsec_in_clear");
    await redis.del(idempotencyRedisKey(`${prefix}_clear`, "k"));
  });

  it("does not open a sealed reply moved under another key", async () => {
    const store = new RedisIdempotencyStore(redis, `${prefix}_moved`, new ReplyCipher(randomBytes(32)));
    await store.claim("a", { state: "in_progress", fingerprint: "f", token: "t1" }, 10_000);
    await store.complete("a", { state: "done", fingerprint: "f", token: "t1", reply: { status: 201, body: { secret: "whsec_of_a" } } }, 60_000);
    await redis.set(idempotencyRedisKey(`${prefix}_moved`, "b"), (await redis.get(idempotencyRedisKey(`${prefix}_moved`, "a")))!, "PX", 60_000);
    expect(await store.claim("b", { state: "in_progress", fingerprint: "f", token: "t2" }, 10_000)).toBeUndefined();
    await redis.del(idempotencyRedisKey(`${prefix}_moved`, "a"), idempotencyRedisKey(`${prefix}_moved`, "b"));
  });
});
