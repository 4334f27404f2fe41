import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clusterServersAvailable, REDIS_URL, uniqueSuffix } from "@sched/testing";
import type { IdempotencyRecord } from "../src/domain/idempotency.js";
import { MemoryIdempotencyStore, RedisIdempotencyStore, type IdempotencyStore } from "../src/idempotency/store.js";

const claimOf = (token: string, fingerprint = "f1"): IdempotencyRecord & { state: "in_progress" } => ({ state: "in_progress", fingerprint, token });
const doneOf = (token: string, status = 201): IdempotencyRecord & { state: "done" } => ({
  state: "done",
  fingerprint: "f1",
  token,
  reply: { status, body: { token } },
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
  ["redis", () => new RedisIdempotencyStore(redis!, `idem_${uniqueSuffix()}`), redisUp],
];

describe.each(stores)("%s idempotency store", (_name, makeStore, available) => {
  it.runIf(available)("gives a key to exactly one of many simultaneous claims", async () => {
    const store = makeStore();
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => store.claim("k", claimOf(`t${i}`), 10_000)));
    const winners = outcomes.filter((o) => o === undefined);
    expect(winners).toHaveLength(1);
    const winner = outcomes.findIndex((o) => o === undefined);
    for (const o of outcomes.filter((o) => o !== undefined)) expect(o).toEqual(claimOf(`t${winner}`));
  });

  it.runIf(available)("answers the finished record once the claim holder completes", async () => {
    const store = makeStore();
    await store.claim("k", claimOf("t1"), 10_000);
    await store.complete("k", doneOf("t1"), 60_000);
    expect(await store.claim("k", claimOf("t2"), 10_000)).toEqual(doneOf("t1"));
  });

  it.runIf(available)("lets only the claim holder settle or release the record", async () => {
    const store = makeStore();
    await store.claim("k", claimOf("t1"), 10_000);
    await store.complete("k", doneOf("intruder"), 60_000);
    await store.release("k", "intruder");
    expect(await store.claim("k", claimOf("t2"), 10_000)).toEqual(claimOf("t1"));
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
    expect(await store.claim("k", claimOf("t3"), 10_000)).toEqual(claimOf("t2"));
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
