import { env } from "@sched/config";
import { z } from "zod";
import { DEFAULT_EDGE_LIMITS } from "./http/server.js";

/** What the gateway does when its environment says nothing (standalone mode takes the same). */
export const GATEWAY_DEFAULTS = {
  busTimeoutMs: 5_000,
  authCacheTtlMs: 1_000,
  standardPerMinute: 100,
  aiPerMinute: 10,
  authFailuresPerMinute: 30,
  rateWindowSeconds: 60,
  trustProxy: "false",
  ...DEFAULT_EDGE_LIMITS,
};

/** The gateway's environment, parsed once at start-up. */
export const gatewayConfigSchema = z.object({
  PORT: env.port(8080),
  REDIS_URL: z.string().min(1).default("redis://127.0.0.1:6379"),
  ADMIN_TOKEN: z.string().min(16, "must be at least 16 characters"),
  /** Deadline of every bus request made for an HTTP request. */
  BUS_TIMEOUT_MS: env.positiveInt(GATEWAY_DEFAULTS.busTimeoutMs),
  /** How long a resolved API key is trusted without asking accounts again; bounds revocation delay. */
  AUTH_CACHE_TTL_MS: env.positiveInt(GATEWAY_DEFAULTS.authCacheTtlMs),
  RATE_LIMIT_STANDARD_PER_MINUTE: env.positiveInt(GATEWAY_DEFAULTS.standardPerMinute),
  RATE_LIMIT_AI_PER_MINUTE: env.positiveInt(GATEWAY_DEFAULTS.aiPerMinute),
  RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: env.positiveInt(GATEWAY_DEFAULTS.authFailuresPerMinute),
  /** Length of the fixed window the limits count in; the "per minute" limits assume 60. */
  RATE_LIMIT_WINDOW_SECONDS: env.positiveInt(GATEWAY_DEFAULTS.rateWindowSeconds),
  /** Request line and headers together, in bytes (431 past it). */
  MAX_HEADER_BYTES: env.positiveInt(GATEWAY_DEFAULTS.maxHeaderBytes),
  /** URL length in bytes (414 past it). */
  MAX_URL_BYTES: env.positiveInt(GATEWAY_DEFAULTS.maxUrlBytes),
  /** Slow clients: time to send the headers, and the whole request (408 past either). */
  HEADERS_TIMEOUT_MS: env.positiveInt(GATEWAY_DEFAULTS.headersTimeoutMs),
  REQUEST_TIMEOUT_MS: env.positiveInt(GATEWAY_DEFAULTS.requestTimeoutMs),
  KEEP_ALIVE_TIMEOUT_MS: env.positiveInt(GATEWAY_DEFAULTS.keepAliveTimeoutMs),
  /** Requests in progress at once on one replica, and bodies being received at once, counted apart (503 past either). */
  MAX_IN_FLIGHT: env.positiveInt(GATEWAY_DEFAULTS.maxInFlight),
  /** The percentage of those places one client address or one API key may hold (503 past it). */
  MAX_IN_FLIGHT_SHARE_PERCENT: env.positiveInt(GATEWAY_DEFAULTS.inFlightSharePercent).pipe(z.number().max(100)),
  /** Deepest nesting of arrays and objects in a JSON body (400 invalid_json past it). */
  MAX_JSON_DEPTH: env.positiveInt(GATEWAY_DEFAULTS.maxJsonDepth),
  /** Express "trust proxy" setting; off means the client address is the socket's. */
  TRUST_PROXY: z.string().default(GATEWAY_DEFAULTS.trustProxy),
  /** Where clients reach the deployment; errors' `docUrl` points under it (relative to the API's address when unset). */
  PUBLIC_BASE_URL: env.publicBaseUrl(),
});
export type GatewayConfig = z.output<typeof gatewayConfigSchema>;

/** Everything a gateway is set up with, whichever wiring runs it. */
export type GatewaySettings = typeof GATEWAY_DEFAULTS & { adminToken: string; publicBaseUrl?: string | undefined };

/** The settings the environment gives (main.ts); standalone mode takes the defaults instead. */
export function settingsOf(config: GatewayConfig): GatewaySettings {
  return {
    adminToken: config.ADMIN_TOKEN,
    busTimeoutMs: config.BUS_TIMEOUT_MS,
    authCacheTtlMs: config.AUTH_CACHE_TTL_MS,
    standardPerMinute: config.RATE_LIMIT_STANDARD_PER_MINUTE,
    aiPerMinute: config.RATE_LIMIT_AI_PER_MINUTE,
    authFailuresPerMinute: config.RATE_LIMIT_AUTH_FAILURES_PER_MINUTE,
    rateWindowSeconds: config.RATE_LIMIT_WINDOW_SECONDS,
    trustProxy: config.TRUST_PROXY,
    maxHeaderBytes: config.MAX_HEADER_BYTES,
    maxUrlBytes: config.MAX_URL_BYTES,
    headersTimeoutMs: config.HEADERS_TIMEOUT_MS,
    requestTimeoutMs: config.REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: config.KEEP_ALIVE_TIMEOUT_MS,
    maxInFlight: config.MAX_IN_FLIGHT,
    inFlightSharePercent: config.MAX_IN_FLIGHT_SHARE_PERCENT,
    maxJsonDepth: config.MAX_JSON_DEPTH,
    ...(config.PUBLIC_BASE_URL ? { publicBaseUrl: config.PUBLIC_BASE_URL } : {}),
  };
}
