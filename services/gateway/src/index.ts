export { createGatewayApp, type GatewayDeps } from "./app.js";
export { Authenticator } from "./auth/authenticate.js";
export { RateLimits } from "./limits/rateLimits.js";
export { GATEWAY_DEFAULTS, gatewayConfigSchema, settingsOf, type GatewayConfig, type GatewaySettings } from "./config.js";
export { assembleGateway, type AssembledGateway, type GatewayParts } from "./assemble.js";
export { MemoryIdempotencyStore, RedisIdempotencyStore, type IdempotencyStore } from "./idempotency/store.js";
export { createGatewayServer, DEFAULT_EDGE_LIMITS, type EdgeLimits } from "./http/server.js";
export { openRedis } from "./limits/redisLink.js";
export { routeTemplateOf } from "./domain/routeMatch.js";
