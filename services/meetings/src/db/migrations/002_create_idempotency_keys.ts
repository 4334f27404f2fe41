import { idempotencyKeysMigration } from "@sched/db/idempotent-writes";

/** Idempotency-Key records, per API key: the table every writing service keeps (`@sched/db/idempotent-writes`). */
export const createIdempotencyKeys = idempotencyKeysMigration("002_create_idempotency_keys");
