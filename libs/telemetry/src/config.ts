import { env } from "@sched/config";
import { z } from "zod";

/** An unset variable and an empty one mean the same, as the OpenTelemetry spec says. */
const optional = () => env.optional(z.string().trim());

const list = () => optional().transform((v) => (v === undefined ? undefined : v.split(",").map((s) => s.trim().toLowerCase())));

/**
 * The standard OTEL_* variables that decide what is switched on. The SDK and
 * its exporters read the rest themselves (headers, protocol, sampler, batch
 * sizes, resource attributes).
 */
export const telemetryConfigSchema = z.object({
  OTEL_SDK_DISABLED: optional().transform((v) => v?.toLowerCase() === "true"),
  OTEL_SERVICE_NAME: optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optional(),
  OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: optional(),
  /** `otlp`, `console` or `none`; unset means OTLP when an endpoint is set. */
  OTEL_TRACES_EXPORTER: list(),
  /** `otlp` or `none` for the push export; the Prometheus text on /metrics is always there. */
  OTEL_METRICS_EXPORTER: list(),
  OTEL_METRIC_EXPORT_INTERVAL: env.positiveInt(60_000),
  OTEL_EXPORTER_OTLP_PROTOCOL: optional(),
  OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: optional(),
});
export type TelemetryConfig = z.output<typeof telemetryConfigSchema>;

/** Whether spans are recorded and exported: only when an exporter is configured, so an unconfigured process pays nothing. */
export function tracingWanted(config: TelemetryConfig): boolean {
  if (config.OTEL_SDK_DISABLED) return false;
  const exporters = config.OTEL_TRACES_EXPORTER;
  if (exporters) return !exporters.includes("none") && exporters.length > 0;
  return config.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined || config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== undefined;
}

/** Whether metrics are pushed over OTLP besides being served as Prometheus text. */
export function otlpMetricsWanted(config: TelemetryConfig): boolean {
  if (config.OTEL_SDK_DISABLED) return false;
  const exporters = config.OTEL_METRICS_EXPORTER;
  if (exporters) return exporters.includes("otlp");
  return config.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined || config.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT !== undefined;
}

/** The OTLP protocol of the metrics push: `http/protobuf` (the standard default), `http/json` or `grpc`. */
export function metricsProtocol(config: TelemetryConfig): "http/protobuf" | "http/json" | "grpc" {
  const protocol = config.OTEL_EXPORTER_OTLP_METRICS_PROTOCOL ?? config.OTEL_EXPORTER_OTLP_PROTOCOL;
  return protocol === "http/json" || protocol === "grpc" ? protocol : "http/protobuf";
}

/**
 * The service name when OTEL_SERVICE_NAME is not set: taken from the entry
 * script (`services/<name>/src/main.ts` → `<name>`), so every process of
 * `npm run cluster` or a container is told apart without extra settings.
 */
export function serviceNameFromEntry(entry: string | undefined): string {
  const m = entry ? /services[\\/]([a-z0-9-]+)[\\/](?:src|dist)[\\/]main\.[cm]?[jt]s$/.exec(entry) : null;
  return m ? m[1]! : "sched";
}

/** Modules the ESM loader hook wraps for the instrumentations; everything else loads untouched. */
export const INSTRUMENTED_MODULES = ["express", "pg", "http", "https"];
