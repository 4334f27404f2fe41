import type { Bus, Stoppable } from "@sched/bus";
import type { Logger } from "@sched/logging";
import { publicRoutes } from "@sched/proto";
import { withHttpMetrics } from "@sched/telemetry";
import type { Redis } from "ioredis";
import type { Server } from "node:http";
import { createGatewayApp, type GatewayDeps } from "./app.js";
import { Authenticator } from "./auth/authenticate.js";
import type { GatewaySettings } from "./config.js";
import { createGatewayServer } from "./http/server.js";
import type { IdempotencyStore } from "./idempotency/store.js";
import { RateLimits } from "./limits/rateLimits.js";
import { RequestLogRecorder } from "./requestLog/recorder.js";

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
  const app = createGatewayApp({
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
  return { server: createGatewayServer(withHttpMetrics(app), settings, settings.publicBaseUrl), background };
}
