import { processConfigSchema } from "@sched/process";
import { env } from "@sched/config";
import { z } from "zod";

/** Variables every service process reads (cluster and production wiring): the process's, and its database. */
export const commonConfigSchema = processConfigSchema.extend({
  DATABASE_URL: z.string().min(1).default("postgres://postgres@127.0.0.1:5432/postgres"),
  DB_POOL_MAX: env.positiveInt(10),
  /** Postgres ends a statement, or a transaction left idle, after this long (migrations are not bounded). */
  DB_STATEMENT_TIMEOUT_MS: env.positiveInt(30_000),
});
export type CommonConfig = z.output<typeof commonConfigSchema>;
