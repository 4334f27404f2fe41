export { outboxMigration, outboxTraceContextMigration } from "./migration.js";
export { enqueueEvent, outboxInsert } from "./enqueue.js";
export { startOutboxRelay, type OutboxRelay, type OutboxRelayOptions } from "./relay.js";
