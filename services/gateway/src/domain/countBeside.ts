/**
 * A key's count in a bucket as this gateway last saw it from Redis, with
 * the reads it has let through since, counted beside their forwarding and
 * not yet answered for.
 */
export interface LastCount {
  /** Requests counted in the window, this replica's and every other's, plus the reads let through since. */
  consumed: number;
  /** When the window counted ends (Redis's expiry of the count). */
  windowEndsAtMs: number;
  /** When Redis gave the count. */
  countedAtMs: number;
  /** The client address the count was taken for, and whether it had failed authentications then. */
  address: string;
  addressHadFailures: boolean;
}

/**
 * How old a count may be and still stand for the key's: other replicas count
 * too, and one second is what a revoked key is trusted for as well.
 */
export const LAST_COUNT_FRESH_MS = 1_000;

/** The fewest requests a read counted beside its forwarding must leave below the limit: a few, and a fifth of a large one. */
const FLOOR = 20;
export const marginBelow = (limit: number): number => Math.max(FLOOR, Math.ceil(limit / 5));

/**
 * Whether a read may be forwarded while it is counted, rather than once it
 * has been: only a GET, whose answer is dropped unread if the count refuses
 * it, of a key whose last count here is fresh, in a window still open, from
 * the same address with no failed authentication then, and well below its
 * limit. A key near its limit, a new one, a write, or a changed address waits
 * for its count, so a client past its limit reaches no service.
 */
export function mayCountBeside(method: string, last: LastCount | undefined, limit: number, address: string, nowMs: number): boolean {
  if (method !== "GET" || last === undefined) return false;
  if (nowMs - last.countedAtMs > LAST_COUNT_FRESH_MS || nowMs >= last.windowEndsAtMs) return false;
  if (last.address !== address || last.addressHadFailures) return false;
  return limit - last.consumed >= marginBelow(limit);
}
