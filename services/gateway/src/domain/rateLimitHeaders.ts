/** The state of one rate-limit bucket after a request was counted. */
export interface BucketState {
  limit: number;
  remaining: number;
  msBeforeReset: number;
}

/** X-RateLimit-* headers: Reset is the Unix time in seconds at which the window ends. */
export function rateLimitHeaders(state: BucketState, nowMs: number): Record<string, string> {
  return {
    "X-RateLimit-Limit": String(state.limit),
    "X-RateLimit-Remaining": String(Math.max(0, state.remaining)),
    "X-RateLimit-Reset": String(Math.ceil((nowMs + state.msBeforeReset) / 1000)),
  };
}

/** Retry-After in whole seconds, at least 1. */
export function retryAfterSeconds(msBeforeReset: number): number {
  return Math.max(1, Math.ceil(msBeforeReset / 1000));
}
