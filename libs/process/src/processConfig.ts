import { env } from "@sched/config";
import { z } from "zod";

/** Variables every process reads, the gateway included: the bus, logs, probes, shutdown. */
export const processConfigSchema = z.object({
  NATS_URL: z.string().min(1).default("nats://127.0.0.1:4222"),
  BUS_NAMESPACE: env.busNamespace(),
  /** Copies JetStream keeps of each stream a service creates: 3 on a clustered NATS, 1 on a single server. */
  BUS_STREAM_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
  LOG_LEVEL: env.logLevel(),
  /** Port of /livez, /readyz and /metrics (9464 is Prometheus's registered exporter port). */
  HEALTH_PORT: env.port(9464),
  /** Milliseconds a stopping process may take before it exits anyway. */
  SHUTDOWN_GRACE_MS: env.positiveInt(10_000),
  /**
   * Milliseconds between readiness turning false and the process no longer
   * taking work, for load balancers to stop sending it any (the gateway).
   */
  SHUTDOWN_DELAY_MS: z.coerce.number().int().min(0).default(0),
});
export type ProcessConfig = z.output<typeof processConfigSchema>;
