// Loads the database code: the gateway imports `@sched/bus` only, never this entry.
export { writeOnce, type RouteRequest } from "./writeOnce.js";
export { idempotencyKeysMigration } from "./migration.js";
export { deleteExpiredIdempotencyKeys } from "./records.js";
export { readIdempotencyKey } from "./requestHeaders.js";
export { sweepExpiredIdempotencyKeys } from "./sweeper.js";
