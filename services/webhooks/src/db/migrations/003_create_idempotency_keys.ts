import { idempotencyKeysMigration } from "@sched/db/idempotent-writes";

/**
 * Idempotency-Key records, per API key: an event resent under a key is
 * recorded with its answer in the transaction that queues the deliveries,
 * so a retry the gateway no longer remembers does not queue them twice.
 */
export const createIdempotencyKeys = idempotencyKeysMigration("003_create_idempotency_keys");
