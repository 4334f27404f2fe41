import { createLogger } from "@sched/logging";
import { Redis } from "ioredis";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clusterServersAvailable, REDIS_URL, rejection, uniqueSuffix } from "@sched/testing";
import { claimLeaseMs, idempotencyStoreKey, type IdempotencyRecord } from "../src/domain/idempotency.js";
import { forwardOnce } from "../src/outbound/idempotency/forwardOnce.js";
import { ReplyCipher } from "../src/outbound/idempotency/replyCipher.js";
import { MemoryIdempotencyStore, RedisIdempotencyStore, type IdempotencyStore } from "../src/outbound/idempotency/store.js";

const claimOf = (token: string, fingerprint = "f1"): IdempotencyRecord & { state: "in_progress" } => ({ state: "in_progress", fingerprint, token });
const doneOf = (token: string, status = 201): IdempotencyRecord & { state: "done" } => ({
  state: "done",
  fingerprint: "f1",
  token,
  reply: { status, body: { token } },
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A record found under a key, whatever its time left. */
const found = (record: IdempotencyRecord) => ({ record, expiresInMs: expect.any(Number) as number });

const redisUp = await clusterServersAvailable();
let redis: Redis | undefined;
beforeAll(() => {
  if (redisUp) redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
});
afterAll(async () => {
  await redis?.quit();
});

const stores: Array<[string, () => IdempotencyStore, boolean]> = [
  ["memory", () => new MemoryIdempotencyStore(), true],
  ["redis", () => new RedisIdempotencyStore(redis!, `idem_${uniqueSuffix()}`, new ReplyCipher(randomBytes(32))), redisUp],
];

describe.each(stores)("%s idempotency store", (_name, makeStore, available) => {
  it.runIf(available)("gives a key to exactly one of many simultaneous claims", async () => {
    const store = makeStore();
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => store.claim("k", claimOf(`t${i}`), 10_000)));
    const winners = outcomes.filter((o) => o === undefined);
    expect(winners).toHaveLength(1);
    const winner = outcomes.findIndex((o) => o === undefined);
    for (const o of outcomes.filter((o) => o !== undefined)) expect(o).toEqual(found(claimOf(`t${winner}`)));
  });

  it.runIf(available)("answers the finished record once the claim holder completes", async () => {
    const store = makeStore();
    await store.claim("k", claimOf("t1"), 10_000);
    await store.complete("k", doneOf("t1"), 60_000);
    expect(await store.claim("k", claimOf("t2"), 10_000)).toEqual(found(doneOf("t1")));
  });

  it.runIf(available)("lets only the claim holder settle or release the record", async () => {
    const store = makeStore();
    await store.claim("k", claimOf("t1"), 10_000);
    await store.complete("k", doneOf("intruder"), 60_000);
    await store.release("k", "intruder");
    expect(await store.claim("k", claimOf("t2"), 10_000)).toEqual(found(claimOf("t1")));
  });

  it.runIf(available)("frees the key when the holder releases it", async () => {
    const store = makeStore();
    await store.claim("k", claimOf("t1"), 10_000);
    await store.release("k", "t1");
    expect(await store.claim("k", claimOf("t2"), 10_000)).toBeUndefined();
  });

  it.runIf(available)("frees the key when a claim's lease runs out, and a late holder cannot settle it then", async () => {
    const store = makeStore();
    await store.claim("k", claimOf("t1"), 50);
    await sleep(120);
    expect(await store.claim("k", claimOf("t2"), 10_000)).toBeUndefined();
    await store.complete("k", doneOf("t1"), 60_000);
    expect(await store.claim("k", claimOf("t3"), 10_000)).toEqual(found(claimOf("t2")));
  });

  it.runIf(available)("tells how long a claim has left, so a 409 can say when to retry", async () => {
    const store = makeStore();
    await store.claim("k", claimOf("t1"), 6_000);
    const existing = await store.claim("k", claimOf("t2"), 6_000);
    expect(existing?.expiresInMs).toBeGreaterThan(0);
    expect(existing?.expiresInMs).toBeLessThanOrEqual(6_000);
  });

  it.runIf(available)("forgets a finished record after its retention", async () => {
    const store = makeStore();
    await store.claim("k", claimOf("t1"), 10_000);
    await store.complete("k", doneOf("t1"), 50);
    await sleep(120);
    expect(await store.claim("k", claimOf("t2"), 10_000)).toBeUndefined();
  });

  it.runIf(available)("keeps keys apart", async () => {
    const store = makeStore();
    expect(await store.claim("a", claimOf("t1"), 10_000)).toBeUndefined();
    expect(await store.claim("b", claimOf("t2"), 10_000)).toBeUndefined();
  });
});

const logger = createLogger({ name: "idempotency-claims-test", level: "silent" });
const BUS_TIMEOUT_MS = 800;
/** What docs/api.md promises: a key held by a request that died is free the bus deadline plus one second after it was claimed. */
const FREED_AFTER_MS = BUS_TIMEOUT_MS + 1_000;

describe.each(stores)("a claim left by a gateway killed mid-request (%s store)", (_name, makeStore, available) => {
  it.runIf(available)("lets a retry through within the bus deadline plus a second, and the 409 before carries Retry-After", async () => {
    const store: IdempotencyStore = makeStore();
    const request = { apiKeyId: "key_1", idempotencyKey: "killed", fingerprint: "f1", leaseMs: claimLeaseMs(BUS_TIMEOUT_MS) };
    // What the killed gateway did: claimed the key as it would for this request, and never released it.
    const claimedAt = Date.now();
    expect(await store.claim(idempotencyStoreKey(request.apiKeyId, request.idempotencyKey), { state: "in_progress", fingerprint: "f1", token: "killed" }, request.leaseMs)).toBeUndefined();

    let forwarded = 0;
    const forward = async () => (forwarded++, { status: 201, body: { id: "mtg_1" } });
    const early = await rejection(forwardOnce(store, logger, request, forward));
    expect([early.status, early.code]).toEqual([409, "idempotency_request_in_progress"]);
    expect(early.details.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(early.details.retryAfterSeconds! * 1_000).toBeLessThan(FREED_AFTER_MS + 1_000);
    expect(forwarded).toBe(0);

    await sleep(Math.max(0, claimedAt + FREED_AFTER_MS + 50 - Date.now()));
    const { reply, replayed } = await forwardOnce(store, logger, request, forward);
    expect([reply.status, replayed, forwarded]).toEqual([201, false, 1]);
  });
});
