import { idempotencyKeysMigration } from "@sched/db/idempotent-writes";

/**
 * Idempotency-Key records, per API key: a contact added under a key is
 * recorded with its answer in the transaction that adds it, so a retry the
 * gateway no longer remembers gets that answer again instead of a 409.
 */
export const createIdempotencyKeys = idempotencyKeysMigration("002_create_idempotency_keys");
