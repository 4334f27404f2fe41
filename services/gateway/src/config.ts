import { env } from "@sched/config";
import { z } from "zod";

/** The gateway's environment, parsed once at start-up. */
export const gatewayConfigSchema = z.object({
  PORT: env.port(8080),
  REDIS_URL: z.string().min(1).default("redis://127.0.0.1:6379"),
  ADMIN_TOKEN: z.string().min(16, "must be at least 16 characters"),
  /** Deadline of every bus request made for an HTTP request. */
  BUS_TIMEOUT_MS: env.positiveInt(5_000),
  /** How long a resolved API key is trusted without asking accounts again; bounds revocation delay. */
  AUTH_CACHE_TTL_MS: env.positiveInt(1_000),
  RATE_LIMIT_STANDARD_PER_MINUTE: env.positiveInt(100),
  RATE_LIMIT_AI_PER_MINUTE: env.positiveInt(10),
  RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: env.positiveInt(30),
  /** Express "trust proxy" setting; off means the client address is the socket's. */
  TRUST_PROXY: z.string().default("false"),
});
export type GatewayConfig = z.output<typeof gatewayConfigSchema>;
