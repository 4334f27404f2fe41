import { env } from "@sched/config";
import { z } from "zod";

/** Standalone mode's environment: everything has a default so `npm start` just works. */
export const standaloneConfigSchema = z.object({
  PORT: env.port(8080),
  DATA_DIR: z.string().min(1).default(".data"),
  /** When unset, one is generated on first start and kept in DATA_DIR/admin-token. */
  ADMIN_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  LOG_LEVEL: env.logLevel().default("warn"),
  /** Where clients reach this API when not on this machine's PORT (behind a proxy); errors' `docUrl` points under it. */
  PUBLIC_BASE_URL: env.publicBaseUrl(),
});
