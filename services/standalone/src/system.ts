import { connectNatsBus, MemoryBus, type Bus, type EventLog, type Stoppable } from "@sched/bus";
import { openSchema, type DatabaseTarget, type Knex } from "@sched/db";
import { EmbeddedDatabase, inBackground } from "@sched/db/embedded";
import { EVENT_LOG_SCHEMA, eventLogMigrations, KnexEventLog } from "@sched/db/event-log";
import { assembleGateway, GATEWAY_DEFAULTS, MemoryIdempotencyStore, openRedis, RedisIdempotencyStore, ReplyCipher, type GatewaySettings } from "@sched/gateway";
import type { Logger } from "@sched/logging";
import { startModule, type StartedModule } from "@sched/runtime";
import type { Redis } from "ioredis";
import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { reservePort, type ReservedPort } from "./ports.js";
import { serviceModules } from "./services.js";

/** The folder of DATA_DIR the embedded Postgres keeps every schema in. */
export const EMBEDDED_DATABASE_FOLDER = "postgres";

/** The start of the statements settled() runs. */
export const SETTLED_MARK = "/* settled */";

/** Where the API listens: every IPv4 interface. */
const API_HOST = "0.0.0.0";

/** How the system is wired: one process with embedded parts, or real NATS, Postgres and Redis. */
export type Wiring =
  | {
      kind: "standalone";
      dataDir?: string;
      /** A new embedded database starts from this folder (EmbeddedDatabase.folder()): tests start from one with every schema migrated. */
      startFrom?: Blob;
    }
  | { kind: "cluster"; natsUrl: string; databaseUrl: string; redisUrl: string; namespace: string };

export interface SystemOptions {
  wiring: Wiring;
  logger: Logger;
  port: number;
  adminToken: string;
  /** Gateway settings that tests and deployments tune. */
  gateway?: Partial<GatewaySettings>;
  /** Service-specific environment values, by service name, parsed by each service's schema. */
  serviceEnv?: Record<string, Record<string, string>>;
  /** Told as each stage of start() ends, with how long it took. */
  onStage?: (stage: string, ms: number) => void;
}

/**
 * Every service and the gateway in this process, in the chosen wiring. In
 * cluster wiring each service has its own NATS connection and pool, exactly
 * as separate processes would; only the process boundary is missing.
 */
export class System {
  private readonly running = new Map<string, StartedModule>();
  private gatewayBus!: Bus;
  private server!: Server;
  private redis: Redis | undefined;
  private memoryBus: MemoryBus | undefined;
  /** Standalone: the one embedded Postgres holding every service's schema (and the bus's, on disk). */
  private embedded: EmbeddedDatabase | undefined;
  /** The in-process bus's event log, when the data is kept on disk. */
  private eventLogDb: Knex | undefined;
  private stopGatewayBackground: Stoppable | undefined;
  /** The schemas with an outbox (see settled). */
  private outboxSchemas: string[] | undefined;
  /** The API's port and the dashboard's (its own in a cluster wiring), chosen before anything starts so links can name them. */
  private ports!: { api: number; dashboard: number };
  /** The dashboard's own port in a cluster wiring, held until its pages take it over. */
  private dashboardPort: ReservedPort | undefined;

  constructor(private readonly options: SystemOptions) {}

  get url(): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  /** Where the dashboard's pages are: under the API's port in standalone wiring, on a port of its own in a cluster. */
  get dashboardUrl(): string {
    return `http://localhost:${this.ports.dashboard}/dashboard`;
  }

  async start(): Promise<this> {
    const { wiring, logger } = this.options;
    // Ports the system picks are held from their choice on, and their servers take the held
    // sockets over: another system starting beside this one (a second test worker) could
    // otherwise be given the same port meanwhile.
    const apiPort = this.options.port ? undefined : await reservePort(0, API_HOST);
    this.dashboardPort = wiring.kind === "cluster" ? await reservePort() : undefined;
    const api = this.options.port || apiPort!.port;
    this.ports = { api, dashboard: this.dashboardPort?.port ?? api };
    const stage = this.stageClock();
    if (wiring.kind === "standalone") {
      this.embedded = await EmbeddedDatabase.open(wiring.dataDir ? join(wiring.dataDir, EMBEDDED_DATABASE_FOLDER) : undefined, wiring.startFrom ? { startFrom: wiring.startFrom } : {});
      stage("database ready");
      this.memoryBus = new MemoryBus(logger.child({ component: "bus" }), await this.openEventLog(wiring.dataDir));
    }
    // Embedded, the schemas migrate in turn on the one session anyway.
    let migrating = serviceModules.length;
    const migrated = () => {
      if (--migrating === 0) stage(`${serviceModules.length + (this.eventLogDb ? 1 : 0)} schemas migrated`);
    };
    await Promise.all(serviceModules.map((m) => this.startService(m.name, migrated)));
    stage(`${serviceModules.length} services started`);
    this.gatewayBus = await this.newBus("gateway");
    if (wiring.kind === "cluster") this.redis = openRedis(wiring.redisUrl, logger.child({ component: "gateway" }));
    // The records of the namespace are read by this one gateway only: a fresh key of its own seals them.
    const gateway = await assembleGateway({
      bus: this.gatewayBus,
      logger: logger.child({ component: "gateway" }),
      settings: { ...GATEWAY_DEFAULTS, ...this.options.gateway, adminToken: this.options.adminToken },
      ...(this.redis ? { redis: this.redis } : {}),
      keyPrefix: wiring.kind === "cluster" ? wiring.namespace : "sched",
      idempotency: this.redis && wiring.kind === "cluster" ? new RedisIdempotencyStore(this.redis, wiring.namespace, new ReplyCipher(randomBytes(32))) : new MemoryIdempotencyStore(),
      // Standalone: the dashboard's pages on the API's port; a cluster serves them from the service's own listener.
      ...(wiring.kind === "standalone" ? { pages: [...this.running.values()].flatMap((r) => (r.http ? [r.http] : [])) } : {}),
    });
    this.server = gateway.server;
    this.stopGatewayBackground = gateway.background;
    const heldApiPort = apiPort?.takeOver();
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      if (heldApiPort) this.server.listen(heldApiPort, () => resolve());
      else this.server.listen(this.ports.api, API_HOST, () => resolve());
    });
    stage("gateway listening");
    return this;
  }

  /**
   * Starts one service (again), as its own process would in a cluster
   * wiring (its own bus connection and pool, its pages on their own port);
   * tests use it with stopService to show what a missing service does.
   */
  async startService(name: string, onMigrated?: () => void): Promise<void> {
    const module = serviceModules.find((m) => m.name === name);
    if (!module) throw new Error(`unknown service ${name}`);
    const { wiring, logger } = this.options;
    // Standalone, what a service starts (its outbox relay, event consumers and timers) is background
    // work: it takes its turns on the one embedded session after the requests waiting for it.
    const start = <T>(work: () => Promise<T>) => (wiring.kind === "standalone" ? inBackground(work) : work());
    const started = await start(() => startModule(module, {
      database: this.databaseTarget(),
      bus: wiring.kind === "standalone" ? this.memoryBus! : { connect: () => this.newBus(module.name) },
      logger: logger.child({ service: module.name }),
      settings: { ...this.wiringEnv(), ...this.options.serviceEnv?.[name] },
      developmentDefaults: true,
      listenForPages: wiring.kind === "cluster",
      heldPagesPort: () => this.dashboardPort?.takeOver(),
      ...(onMigrated ? { onMigrated } : {}),
    }));
    this.running.set(name, started);
  }

  async stopService(name: string): Promise<void> {
    const started = this.running.get(name);
    if (!started) return;
    this.running.delete(name);
    await started.stop();
  }

  /** A service's own database handle (tests inspect what was stored). */
  database(name: string): Knex {
    const started = this.running.get(name);
    if (!started) throw new Error(`service ${name} is not running`);
    return started.db;
  }

  /** The one embedded Postgres in standalone wiring (benchmarks count its statements). */
  get embeddedDatabase(): EmbeddedDatabase | undefined {
    return this.embedded;
  }

  /**
   * Standalone: whether the work every change so far started is done: no
   * outbox row waits to be relayed and every consumer has read every event of
   * its subjects. Asked in the session's turn, so no transaction is half way
   * (benchmarks wait for it before they count a run as over). The statement
   * starts with SETTLED_MARK, for counters of statements to leave out.
   */
  async settled(): Promise<boolean> {
    const { embedded, memoryBus } = this;
    if (!embedded || !memoryBus) throw new Error("only the standalone wiring tells when its work is done");
    const session = await embedded.session.acquire().promise;
    try {
      this.outboxSchemas ??= (await session.query<{ schema: string }>(`${SETTLED_MARK} select table_schema as schema from information_schema.tables where table_name = 'outbox'`)).rows.map((r) => r.schema);
      for (const schema of this.outboxSchemas) {
        const { rows } = await session.query(`${SETTLED_MARK} select 1 from "${schema}".outbox where published_at is null limit 1`);
        if (rows.length > 0) return false;
      }
      return memoryBus.settled();
    } finally {
      embedded.session.release(session);
    }
  }

  /** The bus as the gateway sees it. */
  get bus(): Bus {
    return this.gatewayBus;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
    this.server?.closeAllConnections();
    await this.stopGatewayBackground?.stop();
    for (const name of [...this.running.keys()]) await this.stopService(name);
    if (this.gatewayBus !== this.memoryBus) await this.gatewayBus?.close();
    await this.memoryBus?.close();
    await this.eventLogDb?.destroy();
    await this.embedded?.close();
    this.redis?.disconnect();
  }

  /** Reports each stage with the time since the one before. */
  private stageClock(): (stage: string) => void {
    let since = performance.now();
    return (stage) => {
      const now = performance.now();
      this.options.onStage?.(stage, now - since);
      since = now;
    };
  }

  /**
   * Where the in-process bus keeps events: in a schema of the services'
   * database when that is on disk, so an event accepted (and its outbox row
   * marked published) survives a crash as it would on JetStream; in memory,
   * with the data, otherwise. The log joins the transaction of the outbox
   * relay that publishes (docs/design.md): the event and the row's mark
   * are committed together.
   */
  private async openEventLog(dataDir: string | undefined): Promise<EventLog | undefined> {
    if (!dataDir) return undefined;
    this.eventLogDb = await openSchema({ kind: "embedded", database: this.embedded!, joinsTransactions: true }, EVENT_LOG_SCHEMA, eventLogMigrations);
    return new KnexEventLog(this.eventLogDb);
  }

  /** What the wiring tells every service: where the dashboard is, and its own port in a cluster. */
  private wiringEnv(): Record<string, string> {
    return { DASHBOARD_URL: this.dashboardUrl, DASHBOARD_PORT: String(this.ports.dashboard) };
  }

  private databaseTarget(): DatabaseTarget {
    const { wiring } = this.options;
    if (wiring.kind === "cluster") return { kind: "postgres", url: wiring.databaseUrl, poolMax: 5 };
    return { kind: "embedded", database: this.embedded! };
  }

  private async newBus(name: string): Promise<Bus> {
    const { wiring, logger } = this.options;
    if (wiring.kind === "standalone") return this.memoryBus!;
    return connectNatsBus({ servers: wiring.natsUrl, namespace: wiring.namespace, name, logger: logger.child({ component: "bus", service: name }) });
  }
}
