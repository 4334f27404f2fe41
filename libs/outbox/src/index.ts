export { outboxMigration, outboxTraceContextMigration } from "./migration.js";
export { encodedOutboxInsert, enqueueEvent, outboxInsert, outboxInsertFrom, outboxRowJson, type OutboxInsert } from "./enqueue.js";
export { startOutboxRelay, type OutboxRelay, type OutboxRelayOptions } from "./relay.js";
