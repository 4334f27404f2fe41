import type { Redis } from "ioredis";
import type { IdempotencyRecord } from "../../domain/idempotency.js";
import type { ReplyCipher } from "./replyCipher.js";
import { openRecord, sealRecord } from "./sealedRecord.js";

/** A record found under a key, and how long until it expires (for a claim: at the latest when the key is free again). */
export interface ExistingRecord {
  record: IdempotencyRecord;
  expiresInMs: number;
}

/** Where the gateway keeps Idempotency-Key records: Redis across replicas, or this process's memory. */
export interface IdempotencyStore {
  /** Writes `claim` unless a record exists; answers the existing record, or undefined when the claim is ours. */
  claim(id: string, claim: IdempotencyRecord & { state: "in_progress" }, leaseMs: number): Promise<ExistingRecord | undefined>;
  /** Replaces our claim with the finished record, if the claim is still ours. */
  complete(id: string, record: IdempotencyRecord & { state: "done" }, retentionMs: number): Promise<void>;
  /** Drops our claim, so the request can be sent again. */
  release(id: string, token: string): Promise<void>;
}

export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly records = new Map<string, { record: IdempotencyRecord; expiresAt: number }>();

  async claim(id: string, claim: IdempotencyRecord & { state: "in_progress" }, leaseMs: number): Promise<ExistingRecord | undefined> {
    const existing = this.live(id);
    if (existing) return { record: existing, expiresInMs: this.records.get(id)!.expiresAt - Date.now() };
    this.sweep();
    this.records.set(id, { record: claim, expiresAt: Date.now() + leaseMs });
    return undefined;
  }

  async complete(id: string, record: IdempotencyRecord & { state: "done" }, retentionMs: number): Promise<void> {
    if (this.live(id)?.token !== record.token) return;
    this.records.set(id, { record, expiresAt: Date.now() + retentionMs });
  }

  async release(id: string, token: string): Promise<void> {
    if (this.live(id)?.token === token) this.records.delete(id);
  }

  private live(id: string): IdempotencyRecord | undefined {
    const entry = this.records.get(id);
    if (entry && entry.expiresAt > Date.now()) return entry.record;
    this.records.delete(id);
    return undefined;
  }

  /** Expired records go when new ones arrive, so memory follows the keys of the last day. */
  private sweep(): void {
    if (this.records.size % 1_000 !== 0) return;
    const now = Date.now();
    for (const [id, entry] of this.records) if (entry.expiresAt <= now) this.records.delete(id);
  }
}

/**
 * Where Redis keeps the record of `id`. Apart from `<prefix>:idem:`, where
 * gateways before sealing kept replies in clear: during an upgrade neither
 * version reads the other's records (a retry across them runs again, as
 * after a key rotation), and the records in clear expire within 24 hours.
 */
export function idempotencyRedisKey(keyPrefix: string, id: string): string {
  return `${keyPrefix}:idem-sealed:${id}`;
}

// Settling compares the claim's token in Redis itself, so a late request never overwrites a newer claim.
const COMPLETE_IF_OURS = `
local current = redis.call("GET", KEYS[1])
if current and cjson.decode(current).token == ARGV[1] then
  redis.call("SET", KEYS[1], ARGV[2], "PX", ARGV[3])
end
return 0`;
const RELEASE_IF_OURS = `
local current = redis.call("GET", KEYS[1])
if current and cjson.decode(current).token == ARGV[1] then
  redis.call("DEL", KEYS[1])
end
return 0`;
// A record nobody can read goes, unless another request has replaced it meanwhile.
const DELETE_IF_UNCHANGED = `
if redis.call("GET", KEYS[1]) == ARGV[1] then
  redis.call("DEL", KEYS[1])
end
return 0`;

/**
 * Records shared by every gateway replica. Finished records hold their reply
 * sealed under the key all replicas share (IDEMPOTENCY_SEAL_KEY), so a
 * secret shown once is never at rest in clear; one that no longer opens
 * (the key was rotated) is treated as expired, and the request runs again.
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
    private readonly cipher: ReplyCipher,
  ) {}

  async claim(id: string, claim: IdempotencyRecord & { state: "in_progress" }, leaseMs: number): Promise<ExistingRecord | undefined> {
    const key = this.key(id);
    // A record can expire between the failed SET and the GET, or be unreadable and dropped; then the claim is tried again.
    for (let attempt = 0; attempt < 3; attempt++) {
      if ((await this.redis.set(key, sealRecord(this.cipher, id, claim), "PX", leaseMs, "NX")) === "OK") return undefined;
      const [[, existing], [, expiresInMs]] = (await this.redis.multi().get(key).pttl(key).exec()) as [[unknown, string | null], [unknown, number]];
      if (existing === null || expiresInMs <= 0) continue;
      const record = openRecord(this.cipher, id, existing);
      if (record) return { record, expiresInMs };
      await this.redis.eval(DELETE_IF_UNCHANGED, 1, key, existing);
    }
    throw new Error("idempotency record kept changing while being claimed");
  }

  async complete(id: string, record: IdempotencyRecord & { state: "done" }, retentionMs: number): Promise<void> {
    await this.redis.eval(COMPLETE_IF_OURS, 1, this.key(id), record.token, sealRecord(this.cipher, id, record), retentionMs);
  }

  async release(id: string, token: string): Promise<void> {
    await this.redis.eval(RELEASE_IF_OURS, 1, this.key(id), token);
  }

  private key(id: string): string {
    return idempotencyRedisKey(this.keyPrefix, id);
  }
}
