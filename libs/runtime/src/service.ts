import type { Bus, Stoppable } from "@sched/bus";
import type { Knex, Migration } from "@sched/db";
import type { Logger } from "@sched/logging";
import type { z } from "zod";

/** What every service receives: nothing is read from process.env past start-up. */
export interface ServiceDeps<C = unknown> {
  bus: Bus;
  db: Knex;
  logger: Logger;
  config: C;
}

/**
 * A service as the runtimes see it. The same module runs as its own process
 * (cluster, production), inside the standalone process, and in tests.
 */
export interface ServiceModule<S extends z.ZodObject = z.ZodObject> {
  /** Service name: queue group, logger name and, by default, schema. */
  name: string;
  /** The Postgres schema the service owns. */
  schema: string;
  migrations: readonly Migration[];
  /** The service's own environment variables, parsed once at start-up. */
  config: S;
  /**
   * Values standalone mode and tests use where their environment gives none
   * (development-only secrets); a service process never reads them.
   */
  standaloneEnv?: Readonly<Record<string, string>>;
  start(deps: ServiceDeps<z.output<S>>): Promise<Stoppable>;
}

/** Declares a service module with its config type inferred. */
export function defineService<S extends z.ZodObject>(module: ServiceModule<S>): ServiceModule<S> {
  return module;
}
