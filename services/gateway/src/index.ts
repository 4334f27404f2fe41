export { DEV_IDEMPOTENCY_SEAL_KEY, GATEWAY_DEFAULTS, gatewayConfigSchema, gatewaySettings, type GatewaySettings } from "./config.js";
export { assembleGateway, type AssembledGateway, type GatewayParts } from "./assemble.js";
export { ReplyCipher } from "./idempotency/replyCipher.js";
export { MemoryIdempotencyStore, RedisIdempotencyStore, type IdempotencyStore } from "./idempotency/store.js";
export { openRedis } from "./limits/redisLink.js";
