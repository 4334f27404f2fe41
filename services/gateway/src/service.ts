import type { Bus, Stoppable } from "@sched/bus";
import { declareSettings, env, setting, type SettingsOf } from "@sched/config";
import type { Logger } from "@sched/logging";
import { publicRoutes } from "@sched/proto";
import { withHttpMetrics } from "@sched/telemetry";
import type { Redis } from "ioredis";
import type { Server } from "node:http";
import { z } from "zod";
import { createGatewayApp, type GatewayDeps } from "./inbound/http/app.js";
import { createGatewayServer } from "./inbound/http/server.js";
import type { IdempotencyStore } from "./outbound/idempotency/store.js";
import { Authenticator } from "./outbound/keys/authenticator.js";
import { RateLimits } from "./outbound/rateLimits.js";
import { RequestLogRecorder } from "./outbound/requestLog.js";

/**
 * Every tunable of the gateway, declared once: the gateway process and
 * standalone mode read the same variables, and tests start from the same
 * defaults.
 */
const declarations = {
  /** Deadline of every bus request made for an HTTP request. */
  busTimeoutMs: setting("BUS_TIMEOUT_MS", env.positiveInt(5_000)),
  /** How long a resolved API key is trusted without asking accounts again; bounds revocation delay. */
  authCacheTtlMs: setting("AUTH_CACHE_TTL_MS", env.positiveInt(1_000)),
  standardPerMinute: setting("RATE_LIMIT_STANDARD_PER_MINUTE", env.positiveInt(100)),
  aiPerMinute: setting("RATE_LIMIT_AI_PER_MINUTE", env.positiveInt(10)),
  authFailuresPerMinute: setting("RATE_LIMIT_AUTH_FAILURES_PER_MINUTE", env.positiveInt(30)),
  /** Length of the fixed window the limits count in; the "per minute" limits assume 60. */
  rateWindowSeconds: setting("RATE_LIMIT_WINDOW_SECONDS", env.positiveInt(60)),
  /** Express "trust proxy" setting; off means the client address is the socket's. */
  trustProxy: setting("TRUST_PROXY", z.string().default("false")),
  /** Request line and headers together, in bytes (431 past it). */
  maxHeaderBytes: setting("MAX_HEADER_BYTES", env.positiveInt(16_384)),
  /** URL length in bytes (414 past it). */
  maxUrlBytes: setting("MAX_URL_BYTES", env.positiveInt(8_192)),
  /** Slow clients: time to send the headers, and the whole request (408 past either). */
  headersTimeoutMs: setting("HEADERS_TIMEOUT_MS", env.positiveInt(10_000)),
  requestTimeoutMs: setting("REQUEST_TIMEOUT_MS", env.positiveInt(30_000)),
  /**
   * How long an idle keep-alive connection stays open. Longer than the 60 s idle time-out of the usual load
   * balancers and proxies (AWS ALB, nginx's upstream keep-alive), so the side in front closes first: a server that
   * closes a connection its client is just reusing makes that client's request fail with ECONNRESET.
   */
  keepAliveTimeoutMs: setting("KEEP_ALIVE_TIMEOUT_MS", env.positiveInt(65_000)),
  /** Requests in progress at once on one replica, and bodies being received at once, counted apart (503 past either). */
  maxInFlight: setting("MAX_IN_FLIGHT", env.positiveInt(1_000)),
  /** The percentage of those places one client address or one API key may hold (503 past it). */
  inFlightSharePercent: setting("MAX_IN_FLIGHT_SHARE_PERCENT", env.positiveInt(25).pipe(z.number().max(100))),
  /** Deepest nesting of arrays and objects in a JSON body (400 invalid_json past it). */
  maxJsonDepth: setting("MAX_JSON_DEPTH", env.positiveInt(32)),
  /** Where clients reach the deployment; errors' `docUrl` points under it (unset: relative to the API's address; `npm start`: its own http://localhost:PORT). */
  publicBaseUrl: setting("PUBLIC_BASE_URL", env.publicBaseUrl()),
};

/** The gateway's tunables; standalone mode reads them from its environment too. */
export const gatewaySettings = declareSettings(declarations);

/** What the gateway does when its environment says nothing. */
export const GATEWAY_DEFAULTS = gatewaySettings.defaults;

/** The gateway process's environment, parsed once at start-up: its tunables and what only its own process has. */
export const gatewayConfigSchema = gatewaySettings.environment.extend({
  PORT: env.port(8080),
  REDIS_URL: z.string().min(1).default("redis://127.0.0.1:6379"),
  ADMIN_TOKEN: z.string().min(16, "must be at least 16 characters"),
  /** 32 bytes, base64, the same on every replica: the AES-256-GCM key of the replies kept in Redis under Idempotency-Key. */
  IDEMPOTENCY_SEAL_KEY: env.aesKey(),
});
export type GatewayConfig = z.output<typeof gatewayConfigSchema>;

/** Everything a gateway is set up with, whichever wiring runs it. */
export type GatewaySettings = SettingsOf<typeof declarations> & { adminToken: string };

/**
 * A development-only seal key for local clusters (`npm run cluster`, Docker
 * Compose's default, the dev overlay). A deployment sets its own
 * IDEMPOTENCY_SEAL_KEY; standalone mode keeps its records in memory and needs none.
 */
export const DEV_IDEMPOTENCY_SEAL_KEY = Buffer.from("sched-dev-only-idempotency-seal!").toString("base64");

/**
 * The node options a gateway process runs with, wherever it runs as one: its
 * image (the Dockerfile's CMD), `npm run cluster`, and the gateways tests and
 * benchmarks start (@sched/testing, which may import no service, says it
 * again; a test keeps the three equal). Its collections on its main thread,
 * V8's helper threads left out: without it the gateway sometimes fell,
 * during the list of 100 at 200/s, into compacting every 1–1.5 s (7–16 in
 * 20 s, on an idle machine too) and the list's p99 doubled; with it that was
 * never seen (docs/benchmarks.md, "What the gateway keeps during the list,
 * and its collections on one thread"). A replica has one CPU (k8s limit "1")
 * for V8's helper threads to share anyway. Only on the command line: set at
 * run time (`v8.setFlagsFromString`) it aborted the first mark-compact.
 */
export const GATEWAY_NODE_OPTIONS: readonly string[] = ["--single-threaded-gc"];

/** The settings the gateway process's environment gives (main.ts). */
export function settingsOf(config: GatewayConfig): GatewaySettings {
  return { ...gatewaySettings.fromEnvironment(config), adminToken: config.ADMIN_TOKEN };
}

export interface GatewayParts {
  bus: Bus;
  logger: Logger;
  settings: GatewaySettings;
  /** Where the limits count across replicas; without it, in this process's memory. */
  redis?: Redis;
  /** Keeps the counts of systems sharing one Redis apart (the bus namespace). */
  keyPrefix: string;
  idempotency: IdempotencyStore;
  /** Pages served on the API's port under their own path (the dashboard in standalone mode). */
  pages?: GatewayDeps["pages"];
}

export interface AssembledGateway {
  /** Not listening yet: the caller picks the port. */
  server: Server;
  /** Stops listening for key revocations and sends the request log's last batch; the caller closes the server first. */
  background: Stoppable;
}

/** The gateway as every wiring runs it: the key cache, the limits, the routes and the HTTP edge. */
export async function assembleGateway({ bus, logger, settings, redis, keyPrefix, idempotency, pages }: GatewayParts): Promise<AssembledGateway> {
  const authenticator = new Authenticator(bus, { cacheTtlMs: settings.authCacheTtlMs, timeoutMs: settings.busTimeoutMs });
  const listening = await authenticator.listen();
  const requestLog = new RequestLogRecorder(bus, logger);
  const background: Stoppable = {
    stop: async () => {
      await listening.stop();
      await requestLog.stop();
    },
  };
  const rateLimits = new RateLimits(
    {
      standardPerMinute: settings.standardPerMinute,
      aiPerMinute: settings.aiPerMinute,
      authFailuresPerMinute: settings.authFailuresPerMinute,
      windowSeconds: settings.rateWindowSeconds,
    },
    { ...(redis ? { redis } : {}), keyPrefix },
  );
  const handler = createGatewayApp({
    bus,
    logger,
    routes: publicRoutes,
    authenticator,
    rateLimits,
    adminToken: settings.adminToken,
    busTimeoutMs: settings.busTimeoutMs,
    trustProxy: settings.trustProxy,
    idempotency,
    requestLog,
    ...(pages ? { pages } : {}),
    publicBaseUrl: settings.publicBaseUrl,
    edge: {
      maxUrlBytes: settings.maxUrlBytes,
      maxInFlight: settings.maxInFlight,
      inFlightSharePercent: settings.inFlightSharePercent,
      maxJsonDepth: settings.maxJsonDepth,
    },
  });
  return { server: createGatewayServer(withHttpMetrics(handler), settings, settings.publicBaseUrl), background };
}
