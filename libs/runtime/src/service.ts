import type { Bus, Stoppable } from "@sched/bus";
import type { Knex, Migration } from "@sched/db";
import type { Logger } from "@sched/logging";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { z } from "zod";

/** What every service receives: nothing is read from process.env past start-up. */
export interface ServiceDeps<C = unknown> {
  bus: Bus;
  db: Knex;
  logger: Logger;
  config: C;
}

/** Pages a service serves over HTTP itself (the dashboard), all under one path. */
export interface ServiceHttp {
  /** Handles requests under `mountPath`; one it does not handle goes to `next` when there is one. */
  handler: (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void) => void;
  /** Its own port, in a process of its own. */
  port: number;
  /** Where its pages are: on the API's port in standalone mode, and on its own port as they are behind the shared origin. */
  mountPath: string;
}

/** A started service: how to stop it, and the pages it serves, if any. */
export interface ServiceHandle extends Stoppable {
  http?: ServiceHttp;
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
  start(deps: ServiceDeps<z.output<S>>): Promise<ServiceHandle>;
}

/** Declares a service module with its config type inferred. */
export function defineService<S extends z.ZodObject>(module: ServiceModule<S>): ServiceModule<S> {
  return module;
}
