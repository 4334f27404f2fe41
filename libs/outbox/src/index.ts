export { outboxMigration } from "./migration.js";
export { enqueueEvent } from "./enqueue.js";
export { startOutboxRelay, type OutboxRelay, type OutboxRelayOptions } from "./relay.js";
