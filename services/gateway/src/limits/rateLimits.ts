import { AppError } from "@sched/errors";
import type { Logger } from "@sched/logging";
import type { RateBucket } from "@sched/proto";
import type { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import { retryAfterSeconds, type BucketState } from "../domain/rateLimitHeaders.js";

const WINDOW_SECONDS = 60;

export interface RateLimitSettings {
  standardPerMinute: number;
  aiPerMinute: number;
  authFailuresPerMinute: number;
}

/**
 * Fixed one-minute windows per API key and bucket. With Redis the counts are
 * shared by every gateway replica; if Redis fails, each replica falls back to
 * its own in-memory counts (insurance) until Redis answers again.
 */
export class RateLimits {
  private readonly buckets: Record<RateBucket, RateLimiterAbstract>;
  private readonly authFailures: RateLimiterAbstract;

  constructor(private readonly settings: RateLimitSettings, store: { redis?: Redis; keyPrefix: string; logger: Logger }) {
    const make = (name: string, points: number): RateLimiterAbstract => {
      const opts = { points, duration: WINDOW_SECONDS, keyPrefix: `${store.keyPrefix}:rl:${name}` };
      if (!store.redis) return new RateLimiterMemory(opts);
      return new RateLimiterRedis({ ...opts, storeClient: store.redis, insuranceLimiter: new RateLimiterMemory(opts) });
    };
    this.buckets = { standard: make("standard", settings.standardPerMinute), ai: make("ai", settings.aiPerMinute) };
    this.authFailures = make("authfail", settings.authFailuresPerMinute);
  }

  /** Counts one request of an API key; throws 429 rate_limited past the limit, with the bucket state. */
  async consume(bucket: RateBucket, apiKeyId: string): Promise<BucketState> {
    const limit = bucket === "ai" ? this.settings.aiPerMinute : this.settings.standardPerMinute;
    try {
      const res = await this.buckets[bucket].consume(apiKeyId, 1);
      return { limit, remaining: res.remainingPoints, msBeforeReset: res.msBeforeNext };
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) {
        throw new RateLimitedError({ limit, remaining: 0, msBeforeReset: rejection.msBeforeNext });
      }
      throw rejection;
    }
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
}

/** 429 with the state needed for the headers. */
export class RateLimitedError extends AppError {
  constructor(readonly state: BucketState) {
    super("rate_limited", "Too many requests: the rate limit for this API key is exceeded.", {
      retryAfterSeconds: retryAfterSeconds(state.msBeforeReset),
    });
  }
}
