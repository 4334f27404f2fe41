import { connectNatsBus, EVENT_LOG_SCHEMA, eventLogMigrations, KnexEventLog, MemoryBus, type Bus, type EventLog, type Stoppable } from "@sched/bus";
import { openSchema, type DatabaseTarget, type Knex } from "@sched/db";
import { assembleGateway, GATEWAY_DEFAULTS, MemoryIdempotencyStore, openRedis, RedisIdempotencyStore, type GatewaySettings } from "@sched/gateway";
import type { Logger } from "@sched/logging";
import type { ServiceModule } from "@sched/runtime";
import type { Redis } from "ioredis";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serviceModules } from "./services.js";

/** How the system is wired: one process with embedded parts, or real NATS, Postgres and Redis. */
export type Wiring =
  | { kind: "standalone"; dataDir?: string }
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
}

interface RunningService {
  module: ServiceModule;
  db: Knex;
  bus: Bus;
  handle: Stoppable;
}

/**
 * Every service and the gateway in this process, in the chosen wiring. In
 * cluster wiring each service has its own NATS connection and pool, exactly
 * as separate processes would; only the process boundary is missing.
 */
export class System {
  private readonly running = new Map<string, RunningService>();
  private gatewayBus!: Bus;
  private server!: Server;
  private redis: Redis | undefined;
  private memoryBus: MemoryBus | undefined;
  /** The database of the in-process bus's event log, when the data is kept on disk. */
  private eventLogDb: Knex | undefined;
  private stopAuth: Stoppable | undefined;

  constructor(private readonly options: SystemOptions) {}

  get url(): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  async start(): Promise<this> {
    const { wiring, logger } = this.options;
    if (wiring.kind === "standalone") this.memoryBus = new MemoryBus(logger.child({ component: "bus" }), await this.openEventLog(wiring.dataDir));
    if (wiring.kind === "cluster") await Promise.all(serviceModules.map((m) => this.startService(m.name)));
    else {
      // Each embedded database compiles its own WebAssembly Postgres: started together on
      // a busy machine, every one of them is slow enough to miss its connection deadline.
      for (const m of serviceModules) await this.startService(m.name);
    }
    this.gatewayBus = await this.newBus("gateway");
    if (wiring.kind === "cluster") this.redis = openRedis(wiring.redisUrl, logger.child({ component: "gateway" }));
    const gateway = await assembleGateway({
      bus: this.gatewayBus,
      logger: logger.child({ component: "gateway" }),
      settings: { ...GATEWAY_DEFAULTS, ...this.options.gateway, adminToken: this.options.adminToken },
      ...(this.redis ? { redis: this.redis } : {}),
      keyPrefix: wiring.kind === "cluster" ? wiring.namespace : "sched",
      idempotency: this.redis && wiring.kind === "cluster" ? new RedisIdempotencyStore(this.redis, wiring.namespace) : new MemoryIdempotencyStore(),
    });
    this.server = gateway.server;
    this.stopAuth = gateway.revocations;
    await new Promise<void>((resolve) => this.server.listen(this.options.port, "0.0.0.0", () => resolve()));
    return this;
  }

  /** Starts one service (again); tests use it with stopService to show what a missing service does. */
  async startService(name: string): Promise<void> {
    const module = serviceModules.find((m) => m.name === name);
    if (!module) throw new Error(`unknown service ${name}`);
    const { logger } = this.options;
    const db = await openSchema(this.databaseTarget(), module.schema, module.migrations);
    const bus = await this.newBus(module.name);
    const config = module.config.parse({ ...module.standaloneEnv, ...this.options.serviceEnv?.[name] });
    const handle = await module.start({ bus, db, logger: logger.child({ service: module.name }), config });
    this.running.set(name, { module, db, bus, handle });
  }

  async stopService(name: string): Promise<void> {
    const r = this.running.get(name);
    if (!r) return;
    this.running.delete(name);
    await r.handle.stop();
    if (r.bus !== this.memoryBus) await r.bus.close();
    await r.db.destroy();
  }

  /** A service's own database handle (tests inspect what was stored). */
  database(name: string): Knex {
    const r = this.running.get(name);
    if (!r) throw new Error(`service ${name} is not running`);
    return r.db;
  }

  /** The bus as the gateway sees it. */
  get bus(): Bus {
    return this.gatewayBus;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
    this.server?.closeAllConnections();
    await this.stopAuth?.stop();
    for (const name of [...this.running.keys()]) await this.stopService(name);
    if (this.gatewayBus !== this.memoryBus) await this.gatewayBus?.close();
    await this.memoryBus?.close();
    await this.eventLogDb?.destroy();
    this.redis?.disconnect();
  }

  /**
   * Where the in-process bus keeps events: beside the services' data when that
   * is on disk, so an event accepted (and its outbox row marked published)
   * survives a crash as it would on JetStream; in memory, with the data, otherwise.
   */
  private async openEventLog(dataDir: string | undefined): Promise<EventLog | undefined> {
    if (!dataDir) return undefined;
    this.eventLogDb = await openSchema({ kind: "pglite", dataDir }, EVENT_LOG_SCHEMA, eventLogMigrations);
    return new KnexEventLog(this.eventLogDb);
  }

  private databaseTarget(): DatabaseTarget {
    const { wiring } = this.options;
    if (wiring.kind === "cluster") return { kind: "postgres", url: wiring.databaseUrl, poolMax: 5 };
    return wiring.dataDir ? { kind: "pglite", dataDir: wiring.dataDir } : { kind: "pglite" };
  }

  private async newBus(name: string): Promise<Bus> {
    const { wiring, logger } = this.options;
    if (wiring.kind === "standalone") return this.memoryBus!;
    return connectNatsBus({ servers: wiring.natsUrl, namespace: wiring.namespace, name, logger: logger.child({ component: "bus", service: name }) });
  }
}
