import { env } from "@sched/config";
import { z } from "zod";

/** Variables every service process reads (cluster and production wiring). */
export const commonConfigSchema = z.object({
  NATS_URL: z.string().min(1).default("nats://127.0.0.1:4222"),
  DATABASE_URL: z.string().min(1).default("postgres://postgres@127.0.0.1:5432/postgres"),
  DB_POOL_MAX: env.positiveInt(10),
  BUS_NAMESPACE: env.busNamespace(),
  LOG_LEVEL: env.logLevel(),
  /** Milliseconds a stopping process may take before it exits anyway. */
  SHUTDOWN_GRACE_MS: env.positiveInt(10_000),
});
export type CommonConfig = z.output<typeof commonConfigSchema>;
