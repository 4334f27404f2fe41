import { AppError, isBackingServiceUnavailable } from "@sched/errors";

/**
 * What to do with the rows of a shared insert that failed:
 * - `each`: try every row alone, so one bad row fails only its own request
 *   (a constraint, a value Postgres refuses);
 * - `unexpired`: the wait for a connection ran out at the batch's earliest
 *   deadline; refuse the rows whose deadline has passed, and write the others
 *   together again, bounded by the next earliest deadline;
 * - `none`: the database cannot be reached, is restarting or gave up on the
 *   statement: every row would fail the same way, so every row is refused at
 *   once, not tried again one by one during an outage.
 */
export type BatchRetry = "each" | "unexpired" | "none";

/** knex's pool could not hand out a connection within the wait it was given. */
const POOL_TIMEOUT_NAME = "KnexTimeoutError";

export function batchRetryAfter(err: unknown): BatchRetry {
  if (err instanceof AppError) return err.code === "service_unavailable" ? "unexpired" : "each";
  if ((err as { name?: unknown } | null)?.name === POOL_TIMEOUT_NAME) return "unexpired";
  return isBackingServiceUnavailable(err) ? "none" : "each";
}
