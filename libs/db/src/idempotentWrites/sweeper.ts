import type { Knex } from "knex";
import type { Logger } from "@sched/logging";
import { deleteExpiredIdempotencyKeys } from "./records.js";

const SWEEP_EVERY_MS = 10 * 60_000;

/**
 * Deletes the service's expired Idempotency-Key records every ten minutes,
 * so its table holds about a day of keys. Answers the function that stops it.
 */
export function sweepExpiredIdempotencyKeys(db: Knex, logger: Logger): () => void {
  const sweeper = setInterval(() => {
    deleteExpiredIdempotencyKeys(db).catch((err: unknown) => logger.warn({ err }, "could not delete expired idempotency keys"));
  }, SWEEP_EVERY_MS);
  sweeper.unref();
  return () => clearInterval(sweeper);
}
