export * from "./types.js";
export { MemoryBus } from "./memory.js";
export { CALLER_HEADER, encodeCaller, decodeCaller, dispatch } from "./codec.js";
export { connectNatsBus, type NatsBusOptions } from "./natsBus.js";
export { REPLY_HEADROOM_BYTES, replyBodyBudget } from "./replyBudget.js";
