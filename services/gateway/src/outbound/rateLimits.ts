import { AppError } from "@sched/errors";
import type { Caller, RateBucket } from "@sched/proto";
import type { Redis } from "ioredis";
import { createHash } from "node:crypto";
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from "rate-limiter-flexible";
import { mayCountBeside } from "../domain/countBeside.js";
import { limitFor, type DefaultLimits } from "../domain/limits.js";
import { retryAfterSeconds, type BucketState } from "../domain/rateLimitHeaders.js";
import { LastCounts } from "./lastCounts.js";

/** A count no key reaches, so the counter never refuses on its own. */
const COUNT_ONLY = Number.MAX_SAFE_INTEGER;

/**
 * A known key's count and its address's failed authentications, in one
 * command: what rate-limiter-flexible's consume (a script) and get (MULTI,
 * GET, PTTL, EXEC) do to the same keys, in the same way, one round trip and
 * one command instead of five.
 */
const COUNT_KNOWN_KEY = `
redis.call('set', KEYS[1], 0, 'EX', ARGV[1], 'NX')
local consumed = redis.call('incrby', KEYS[1], 1)
local ttl = redis.call('pttl', KEYS[1])
if ttl == -1 then
  redis.call('expire', KEYS[1], ARGV[1])
  ttl = 1000 * ARGV[1]
end
local failures = redis.call('get', KEYS[2])
local failuresTtl = -2
if failures then failuresTtl = redis.call('pttl', KEYS[2]) end
return {consumed, ttl, failures, failuresTtl}
`;

/** Redis keeps a script it was sent by its SHA-1 digest, and runs it by the digest alone (EVALSHA). */
const COUNT_KNOWN_KEY_SHA = createHash("sha1").update(COUNT_KNOWN_KEY).digest("hex");

type CountKnownKeyReply = [number, number, string | null, number];

/**
 * Runs COUNT_KNOWN_KEY by its digest, sending the script itself only when
 * Redis answers that it does not have it (restarted or flushed since).
 * ioredis's defined commands do the same, but build for every command two
 * copies of its arguments, a command class of their own, and a promise and
 * two closures to catch the NOSCRIPT answer, which a Redis that has the
 * script never sends (docs/benchmarks.md, "The gateway's garbage per request:
 * the bus's request side and the rate-limit script").
 */
async function countKnownKey(redis: Redis, bucketKey: string, failuresKey: string, windowSeconds: number): Promise<CountKnownKeyReply> {
  try {
    return (await redis.evalsha(COUNT_KNOWN_KEY_SHA, 2, bucketKey, failuresKey, windowSeconds)) as CountKnownKeyReply;
  } catch (err) {
    if (!(err instanceof Error) || !err.message.includes("NOSCRIPT")) throw err;
    return (await redis.eval(COUNT_KNOWN_KEY, 2, bucketKey, failuresKey, windowSeconds)) as CountKnownKeyReply;
  }
}

export interface RateLimitSettings extends DefaultLimits {
  authFailuresPerMinute: number;
  /** The window the limits count in; 60 makes them per minute, as documented. */
  windowSeconds: number;
}

/**
 * Fixed one-minute windows per API key and bucket. With Redis the counts are
 * shared by every gateway replica; if Redis fails, each replica falls back to
 * its own in-memory counts (insurance) until Redis answers again.
 */
export class RateLimits {
  /**
   * The limiters only count; the limit is decided per request, since each key
   * may have its own. One count per key and bucket means a changed limit
   * applies to the window already counted.
   */
  private readonly counters: Record<RateBucket, RateLimiterAbstract>;
  private readonly authFailures: RateLimiterAbstract;
  private readonly keyless: RateLimiterAbstract;
  /** What Redis last said of each known key, for its reads counted beside their forwarding. */
  private readonly lastCounts = new LastCounts();

  constructor(
    private readonly settings: RateLimitSettings,
    private readonly store: { redis?: Redis; keyPrefix: string },
  ) {
    this.counters = { standard: this.makeLimiter("standard", COUNT_ONLY), ai: this.makeLimiter("ai", COUNT_ONLY) };
    this.authFailures = this.makeLimiter("authfail", settings.authFailuresPerMinute);
    this.keyless = this.makeLimiter("keyless", COUNT_ONLY);
  }

  /**
   * A request of a key this gateway resolved recently: counts it and reads
   * whether its address has used up its failed-authentication allowance,
   * together. Throws 429 rate_limited past the key's limit, as `consume`.
   * While Redis fails, each goes its own way to the in-memory insurance.
   */
  async consumeKnown(bucket: RateBucket, caller: Pick<Caller, "apiKeyId" | "rateLimits">, address: string): Promise<{ counted: BucketState; authFailuresExhausted: BucketState | undefined }> {
    const limit = limitFor(bucket, caller, this.settings);
    let reply: CountKnownKeyReply | undefined;
    if (this.store.redis) {
      try {
        reply = await countKnownKey(this.store.redis, this.counters[bucket].getKey(caller.apiKeyId), this.authFailures.getKey(address), this.settings.windowSeconds);
      } catch {
        // Redis failed: the in-memory insurance answers below.
        reply = undefined;
      }
    }
    if (!reply) {
      this.lastCounts.forget(bucket, caller.apiKeyId);
      const [authFailuresExhausted, counted] = await Promise.all([this.authFailuresExhausted(address), this.consume(bucket, caller)]);
      return { counted, authFailuresExhausted };
    }
    const [consumed, msBeforeReset, failures, failuresMs] = reply;
    const now = Date.now();
    this.lastCounts.record(bucket, caller.apiKeyId, consumed, now + msBeforeReset, now, address, failures !== null);
    if (consumed > limit) throw new RateLimitedError({ limit, remaining: 0, msBeforeReset });
    const failuresLimit = this.settings.authFailuresPerMinute;
    return {
      counted: { limit, remaining: limit - consumed, msBeforeReset },
      authFailuresExhausted: failures !== null && Number(failures) >= failuresLimit ? { limit: failuresLimit, remaining: 0, msBeforeReset: failuresMs } : undefined,
    };
  }

  /**
   * Whether a request of a known key may be forwarded while `consumeKnown`
   * counts it (domain/countBeside.ts); if so, it is taken off the key's last
   * count at once, so the reads let through before Redis answers again are
   * reckoned with. Only counts Redis gave are trusted: while it fails, every
   * request waits for its count.
   */
  mayCountBeside(method: string, bucket: RateBucket, caller: Pick<Caller, "apiKeyId" | "rateLimits">, address: string): boolean {
    const last = this.lastCounts.get(bucket, caller.apiKeyId);
    if (last === undefined || !mayCountBeside(method, last, limitFor(bucket, caller, this.settings), address, Date.now())) return false;
    last.consumed += 1;
    return true;
  }

  /**
   * Counts a request to a route that takes no key (a provider's redirect) by
   * client address, with the standard limit, so such a route is no way
   * around the limits.
   */
  async consumeKeyless(address: string): Promise<BucketState> {
    return this.count(this.keyless, address, this.settings.standardPerMinute);
  }

  /** Counts one request of an API key; throws 429 rate_limited past the key's limit, with the bucket state. */
  async consume(bucket: RateBucket, caller: Pick<Caller, "apiKeyId" | "rateLimits">): Promise<BucketState> {
    return this.count(this.counters[bucket], caller.apiKeyId, limitFor(bucket, caller, this.settings));
  }

  private async count(counter: RateLimiterAbstract, key: string, limit: number): Promise<BucketState> {
    // Refused requests count too, as they do with a limiter that decides itself.
    const counted = await counter.consume(key, 1);
    if (counted.consumedPoints > limit) throw new RateLimitedError({ limit, remaining: 0, msBeforeReset: counted.msBeforeNext });
    return { limit, remaining: limit - counted.consumedPoints, msBeforeReset: counted.msBeforeNext };
  }

  /** Whether this client address has used up its failed-authentication allowance. */
  async authFailuresExhausted(address: string): Promise<BucketState | undefined> {
    const res = await this.authFailures.get(address);
    if (res && res.consumedPoints >= this.settings.authFailuresPerMinute) {
      return { limit: this.settings.authFailuresPerMinute, remaining: 0, msBeforeReset: res.msBeforeNext };
    }
    return undefined;
  }

  async recordAuthFailure(address: string): Promise<void> {
    await this.authFailures.penalty(address, 1);
  }

  private makeLimiter(name: string, points: number): RateLimiterAbstract {
    const opts = { points, duration: this.settings.windowSeconds, keyPrefix: `${this.store.keyPrefix}:rl:${name}` };
    if (!this.store.redis) return new RateLimiterMemory(opts);
    return new RateLimiterRedis({ ...opts, storeClient: this.store.redis, insuranceLimiter: new RateLimiterMemory(opts) });
  }
}

/** 429 with the state needed for the headers. */
export class RateLimitedError extends AppError {
  constructor(readonly state: BucketState) {
    super("rate_limited", "Too many requests: the rate limit for this API key is exceeded.", {
      retryAfterSeconds: retryAfterSeconds(state.msBeforeReset),
    });
  }
}
