/** How long deliveries are retried and how the waits between attempts grow. */
export interface RetryPolicy {
  /** The wait after the first failed attempt. */
  baseMs: number;
  /** The longest single wait. */
  maxDelayMs: number;
  /** How long after its event a delivery is still tried; past it, it fails. */
  windowMs: number;
}

/**
 * When attempt `attempts + 1` is due, or null when it would fall past the
 * retry window (the delivery has then failed). Waits double from `baseMs` up
 * to `maxDelayMs`, with "equal jitter": half the wait fixed, half random, so
 * deliveries failing together (a receiver's outage) do not all return in the
 * same instant, and none comes back sooner than half its wait.
 */
export function nextAttemptAt(attempts: number, createdAt: number, now: number, policy: RetryPolicy, random: () => number = Math.random): number | null {
  const exact = Math.min(policy.maxDelayMs, policy.baseMs * 2 ** Math.max(0, attempts - 1));
  const due = now + Math.round(exact / 2 + (exact / 2) * random());
  return due > createdAt + policy.windowMs ? null : due;
}

/**
 * Whether a delivery that has just failed for good disables its endpoint:
 * when nothing reached the endpoint since that delivery was queued, the
 * endpoint has failed everything for the whole retry window. The recorded
 * last success may trail the true one by up to `grainMs` (it is not written
 * again for a success that close to it), so only one older than the
 * delivery by more than that proves nothing came since; within it, the
 * endpoint stays enabled and the next delivery to fail for good decides.
 */
export function disablesEndpoint(lastSuccessAt: number | null, deliveryCreatedAt: number, grainMs: number): boolean {
  return lastSuccessAt === null || lastSuccessAt + grainMs < deliveryCreatedAt;
}

/** Whether an HTTP status counts as delivered (Standard Webhooks: any 2xx). */
export function isDelivered(status: number | null): boolean {
  return status !== null && status >= 200 && status <= 299;
}
