export {
  assembleGateway,
  DEV_IDEMPOTENCY_SEAL_KEY,
  GATEWAY_DEFAULTS,
  GATEWAY_NODE_OPTIONS,
  gatewayConfigSchema,
  gatewaySettings,
  type AssembledGateway,
  type GatewayParts,
  type GatewaySettings,
} from "./service.js";
export { ReplyCipher } from "./outbound/idempotency/replyCipher.js";
export { MemoryIdempotencyStore, RedisIdempotencyStore, type IdempotencyStore } from "./outbound/idempotency/store.js";
export { openRedis } from "./outbound/redisLink.js";
