export * from "./types.js";
export { requireCaller } from "./caller.js";
export { MemoryBus } from "./memory.js";
export { CALLER_HEADER, DEADLINE_HEADER, encodeCaller, decodeCaller, dispatch } from "./codec.js";
export { ENCODED_HEADERS } from "./headerText.js";
export { connectNatsBus, type NatsBusOptions } from "./natsBus.js";
export { servicesAnsweringIn } from "./natsNamespace.js";
export { REPLY_HEADROOM_BYTES, replyBodyBudget } from "./replyBudget.js";
export { MemoryEventLog, type EventLog, type AppendOutcome, type NewEvent, type StoredEvent, type StoringOutcome } from "./eventLog.js";
// The event log kept in Postgres is `@sched/db/event-log`: the bus needs no database code, so neither do the images it is in.
