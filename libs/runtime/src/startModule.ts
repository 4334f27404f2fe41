import type { Bus } from "@sched/bus";
import { parseConfig } from "@sched/config";
import { openSchema, type DatabaseTarget, type Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import { closeHttpServer, type ProcessShell } from "@sched/process";
import { createServer, type Server } from "node:http";
import type { AddressInfo, Server as NetServer } from "node:net";
import type { z } from "zod";
import type { ServiceHttp, ServiceModule } from "./service.js";
import { TrackedBus } from "./trackedBus.js";

/** A step of a started module's stop, given the time by which it should be done. */
type StopStep = (deadline: number) => Promise<void>;

export interface ModuleWiring {
  /**
   * The module's schema: a target, migrated here and closed on stop; or a
   * handle migrated already (a test restarting the module on the same
   * data, a wiring that migrates every schema first), its opener's to close.
   */
  database: DatabaseTarget | { migrated: Knex };
  /** The bus: one given (shared, kept open on stop), or connected here once the schema is migrated, and closed on stop. */
  bus: Bus | { connect: () => Promise<Bus> };
  logger: Logger;
  /** The module's settings as environment variables, parsed once by its schema. */
  settings: Readonly<Record<string, string | undefined>>;
  /** Whether the module's development-only values (ServiceModule.standaloneEnv) fill what `settings` leaves unset: never in a service's own process. */
  developmentDefaults?: boolean;
  /** How the settings are parsed; a process of its own ends with a message naming the bad variable (loadConfigOrExit). */
  parseSettings?: <S extends z.ZodObject>(schema: S, env: NodeJS.ProcessEnv) => z.output<S>;
  /** Serve the module's pages on their own port, as their own process does (all interfaces: they are reached from outside). */
  listenForPages?: boolean;
  /**
   * A socket listening on the pages' port already, held since a wiring chose the port before
   * the module started (its links name it), for the pages to take over: the port is never
   * free meanwhile. Asked as the pages are about to listen; without one they take their port anew.
   */
  heldPagesPort?: () => NetServer | undefined;
  /** Told once the schema is migrated (a wiring reporting its start-up stages). */
  onMigrated?: () => void;
  /** A process shell: readiness conditions, and each stop step registered as soon as what it stops exists. */
  shell?: Pick<ProcessShell<unknown>, "ready" | "onStop">;
}

/** A module started: what it runs on, and its stop. */
export interface StartedModule {
  readonly db: Knex;
  readonly bus: TrackedBus;
  /** Pages the module serves; the caller mounts them unless they listen on their own port. */
  readonly http?: ServiceHttp;
  /**
   * Stops in order: finish the pages, stop taking requests and finish those
   * taken, stop consuming events, the module's own stop (timers, the
   * outbox relay), close the bus and the schema's pool when opened here.
   * An open page connection is cut at `deadline` (at once by default).
   */
  stop(deadline?: number): Promise<void>;
}

/**
 * The one way a service module starts, in its own process (runService), in
 * `npm start` and in tests: its settings parsed, its schema migrated, the
 * bus connected, then the module's start, which serves its endpoints before
 * it starts its consumers (every module does both there, in that order),
 * then its pages. What started last stops first. A start that fails stops
 * what it had started and fails with the cause.
 */
export async function startModule<S extends z.ZodObject>(module: ServiceModule<S>, wiring: ModuleWiring): Promise<StartedModule> {
  const { shell, logger } = wiring;
  const env = { ...(wiring.developmentDefaults ? module.standaloneEnv : {}), ...wiring.settings };
  const config = (wiring.parseSettings ?? parseConfig)(module.config, env);

  const steps: Array<[string, StopStep]> = [];
  const onStop = (name: string, step: StopStep) => {
    const once = onceOnly(step);
    steps.push([name, once]);
    shell?.onStop(name, once);
  };
  const stop = async (deadline = Date.now()) => {
    for (const [, step] of [...steps].reverse()) await step(deadline);
  };

  let migrated = false;
  shell?.ready("migrations", () => migrated);
  let bus: TrackedBus | undefined;
  try {
    let db: Knex;
    if ("migrated" in wiring.database) db = wiring.database.migrated;
    else {
      const opened = await openSchema(wiring.database, module.schema, module.migrations);
      onStop("close pool", () => opened.destroy());
      db = opened;
    }
    migrated = true;
    wiring.onMigrated?.();

    let inner: Bus;
    if ("connect" in wiring.bus) {
      const connected = await wiring.bus.connect();
      onStop("drain bus", () => connected.close());
      inner = connected;
    } else inner = wiring.bus;
    const tracked = new TrackedBus(inner);
    bus = tracked;
    shell?.ready("bus", () => tracked.isConnected());
    shell?.ready("endpoints", () => tracked.isServing());

    const service = await module.start({ bus: tracked, db, logger, config });
    onStop("stop service", () => service.stop());
    onStop("stop consumers", () => tracked.stopConsuming());
    onStop("finish requests", () => tracked.stopServing());
    if (service.http && wiring.listenForPages) {
      const server = await listen(service.http, wiring.heldPagesPort?.(), logger);
      onStop("finish pages", (deadline) => closeHttpServer(server, deadline));
    }
    return { db, bus: tracked, ...(service.http ? { http: service.http } : {}), stop };
  } catch (err) {
    // A module that failed part-way may serve or consume already.
    await bus?.stopServing();
    await bus?.stopConsuming();
    await stop().catch(() => undefined);
    throw err;
  }
}

/** A step that runs once: the shell and the caller may both stop the module. */
function onceOnly(step: StopStep): StopStep {
  let running: Promise<void> | undefined;
  return (deadline) => (running ??= step(deadline));
}

/**
 * How long an idle keep-alive connection to a module's pages stays open:
 * longer than what sits in front of them keeps its own (60 s on AWS ALB and
 * nginx), as the gateway's default does, so the proxy never reuses a
 * connection the pages are closing (Node's own 5 s would make that an
 * ECONNRESET for the browser).
 */
const PAGES_KEEP_ALIVE_MS = 65_000;

/** Serves a module's pages on their own port, on every interface: on the socket held there, when given one. */
async function listen(http: ServiceHttp, held: NetServer | undefined, logger: Logger): Promise<Server> {
  const server = createServer({ keepAliveTimeout: PAGES_KEEP_ALIVE_MS }, (req, res) => http.handler(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    if (held) server.listen(held, () => resolve());
    else server.listen(http.port, () => resolve());
  });
  logger.info({ port: (server.address() as AddressInfo).port }, "pages listening");
  return server;
}
