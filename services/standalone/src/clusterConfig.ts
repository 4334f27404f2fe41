import { env } from "@sched/config";
import { commonConfigSchema } from "@sched/runtime";
import { z } from "zod";
import { standaloneConfigSchema } from "./config.js";

/**
 * What `npm run cluster` itself reads; every other variable goes through to
 * the processes, which parse their own.
 */
export const clusterConfigSchema = commonConfigSchema
  .pick({ NATS_URL: true, BUS_NAMESPACE: true })
  .extend(standaloneConfigSchema.pick({ PORT: true, ADMIN_TOKEN: true }).shape)
  .extend({
    /** The first of the processes' health ports, one each in a row; unset: a free port each, printed at start. */
    HEALTH_PORT: env.optional(z.coerce.number().int().min(1).max(65_000)),
    /** The dashboard's own port: its pages are at http://localhost:<port>/dashboard. */
    DASHBOARD_PORT: env.port(8081),
    /** Where users reach the dashboard (sign-in links point there); unset: its own port on localhost. */
    DASHBOARD_URL: env.optional(z.url()),
  });
