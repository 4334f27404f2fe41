import { withinDeadline } from "@sched/deadline";
import type { Logger } from "@sched/logging";
import { serveMetrics } from "@sched/telemetry";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** Named readiness checks; the process is ready when every one holds. */
export type ReadinessChecks = () => Promise<Record<string, boolean>>;

export interface HealthServerOptions {
  port: number;
  /** Every interface by default: probes come from outside the pod. */
  host?: string;
  checks: ReadinessChecks;
  /** True once shutdown has begun: not ready, whatever the checks say. */
  stopping: () => boolean;
  logger: Logger;
  /** How long the checks may take before the probe answers not ready. */
  checkTimeoutMs?: number;
}

export interface HealthServer {
  readonly port: number;
  close(): Promise<void>;
}

/** A check that hangs (a database not answering) counts as failed rather than holding up the probe. */
const DEFAULT_CHECK_TIMEOUT_MS = 2_000;

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
}

function timedChecks(checks: ReadinessChecks, timeoutMs: number): Promise<Record<string, boolean> | undefined> {
  return withinDeadline(
    checks().catch(() => undefined),
    timeoutMs,
    () => undefined,
  );
}

/**
 * The small HTTP server of every process for orchestrators: GET /livez (the
 * process is up), GET /readyz (every check holds and no shutdown has begun),
 * GET /metrics (Prometheus text).
 */
export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET" && req.method !== "HEAD") return json(res, 405, { status: "method_not_allowed" });
    if (path === "/livez") return json(res, 200, { status: "ok" });
    if (path === "/metrics") return serveMetrics(req, res);
    if (path !== "/readyz") return json(res, 404, { status: "not_found" });
    void (async () => {
      const checks = await timedChecks(options.checks, options.checkTimeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS);
      const stopping = options.stopping();
      const ready = !stopping && checks !== undefined && Object.values(checks).every(Boolean);
      json(res, ready ? 200 : 503, { status: ready ? "ready" : stopping ? "stopping" : "not_ready", checks: checks ?? {} });
    })();
  });
  // Probes are short and rare: never let an idle keep-alive socket hold the process open.
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    const listening = () => {
      server.off("error", reject);
      resolve();
    };
    // Without a host Node listens on every interface, IPv6 too where there is one.
    if (options.host) server.listen(options.port, options.host, listening);
    else server.listen(options.port, listening);
  });
  const { port } = server.address() as AddressInfo;
  options.logger.info({ port }, "health endpoints listening");
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
