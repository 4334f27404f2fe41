import { context, metrics, propagation, trace } from "@opentelemetry/api";
import type { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import type { IMetricReader, MeterProvider } from "@opentelemetry/sdk-metrics";
import type { SpanProcessor } from "@opentelemetry/sdk-trace-base";
import { parseConfig } from "@sched/config";
import { withinDeadline } from "@sched/deadline";
import type { IncomingMessage, ServerResponse } from "node:http";
import { beginHistograms, endHistograms } from "./metrics.js";
import { metricsProtocol, otlpMetricsWanted, serviceNameFromEntry, telemetryConfigSchema, tracingWanted, type TelemetryConfig } from "./config.js";

export interface TelemetryOptions {
  /** Used when OTEL_SERVICE_NAME is not set; by default taken from the entry script. */
  serviceName?: string;
  /** Replaces the configured span exporters and switches tracing on (tests use an in-memory exporter). */
  spanProcessors?: SpanProcessor[];
  /** The parsed OTEL_* variables; read from the environment when left out. */
  config?: TelemetryConfig;
}

export interface TelemetryState {
  readonly tracing: boolean;
  readonly serviceName: string;
}

interface Running extends TelemetryState {
  prometheus?: PrometheusExporter;
  meterProvider?: MeterProvider;
  tracingSdk?: { shutdown(): Promise<void> };
}

// Kept on globalThis so a second copy of this module (source and build side by side) finds the running SDK.
const KEY = Symbol.for("@sched/telemetry");
interface Holder {
  starting?: Promise<Running>;
  running?: Running;
}
const holder: Holder = ((globalThis as Record<symbol, unknown>)[KEY] ??= {}) as Holder;

/**
 * Starts the OpenTelemetry SDK once per process: metrics always (Prometheus
 * text for /metrics, OTLP push when configured), tracing only when an
 * exporter is configured or span processors are given. The tracing SDK is
 * loaded only then, so an unconfigured process starts as fast as before.
 */
export function startTelemetry(options: TelemetryOptions = {}): Promise<TelemetryState> {
  holder.starting ??= start(options).then((r) => (holder.running = r));
  return holder.starting;
}

async function start(options: TelemetryOptions): Promise<Running> {
  const config = options.config ?? parseConfig(telemetryConfigSchema);
  const serviceName = config.OTEL_SERVICE_NAME ?? options.serviceName ?? serviceNameFromEntry(process.argv[1]);
  if (config.OTEL_SDK_DISABLED) return { tracing: false, serviceName };
  // Loaded here rather than at the top: code that only records pays for the API alone.
  const [{ PrometheusExporter }, { defaultResource, detectResources, envDetector, resourceFromAttributes }, { AggregationTemporality, InstrumentType, MeterProvider, PeriodicExportingMetricReader }, { histogramProducer }] =
    await Promise.all([import("@opentelemetry/exporter-prometheus"), import("@opentelemetry/resources"), import("@opentelemetry/sdk-metrics"), import("./histogramProducer.js")]);
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector) win over the default name.
  const resource = defaultResource()
    .merge(resourceFromAttributes({ "service.name": serviceName }))
    .merge(detectResources({ detectors: [envDetector] }));

  // The request-path histograms are aggregated outside the SDK (localHistograms.ts); every reader reads them.
  const histograms = beginHistograms();
  const prometheus = new PrometheusExporter({ preventServerStart: true, metricProducers: [histogramProducer(histograms, resource, AggregationTemporality.CUMULATIVE)] });
  const readers: IMetricReader[] = [prometheus];
  if (otlpMetricsWanted(config)) {
    // The exporters read their endpoint, headers and timeout from OTEL_EXPORTER_OTLP_* themselves.
    const protocol = metricsProtocol(config);
    const { OTLPMetricExporter } =
      protocol === "grpc"
        ? await import("@opentelemetry/exporter-metrics-otlp-grpc")
        : protocol === "http/json"
          ? await import("@opentelemetry/exporter-metrics-otlp-http")
          : await import("@opentelemetry/exporter-metrics-otlp-proto");
    const exporter = new OTLPMetricExporter();
    const temporality = exporter.selectAggregationTemporality(InstrumentType.HISTOGRAM);
    readers.push(new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: config.OTEL_METRIC_EXPORT_INTERVAL, metricProducers: [histogramProducer(histograms, resource, temporality)] }));
  }
  const meterProvider = new MeterProvider({ resource, readers });
  metrics.setGlobalMeterProvider(meterProvider);

  const tracing = options.spanProcessors !== undefined || tracingWanted(config);
  let tracingSdk: Running["tracingSdk"];
  if (tracing) {
    const [{ NodeSDK }, { createInstrumentations }] = await Promise.all([import("@opentelemetry/sdk-node"), import("./instrumentations.js")]);
    const sdk = new NodeSDK({
      resource,
      instrumentations: createInstrumentations(),
      // Metrics are the provider above; logs go through pino, not OpenTelemetry.
      metricReaders: [],
      logRecordProcessors: [],
      ...(options.spanProcessors ? { spanProcessors: options.spanProcessors } : {}),
    });
    sdk.start();
    tracingSdk = sdk;
  }
  return { tracing, serviceName, prometheus, meterProvider, tracingSdk };
}

/** Whether spans are being recorded in this process. */
export function tracingEnabled(): boolean {
  return holder.running?.tracing ?? false;
}

/** Answers a scrape with the Prometheus text of every instrument (empty when telemetry is off). */
export function serveMetrics(req: IncomingMessage, res: ServerResponse): void {
  const prometheus = holder.running?.prometheus;
  if (prometheus) return prometheus.getMetricsRequestHandler(req, res);
  res.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" });
  res.end("");
}

/**
 * Exports what is buffered and stops the SDK; bounded so an unreachable
 * collector never holds up a process that must exit.
 */
export async function shutdownTelemetry(timeoutMs = 3_000): Promise<void> {
  const running = await holder.starting?.catch(() => undefined);
  if (!running) return;
  holder.starting = undefined;
  holder.running = undefined;
  const done = Promise.allSettled([running.tracingSdk?.shutdown(), running.meterProvider?.shutdown()]);
  await withinDeadline(done, timeoutMs, () => undefined);
  // Unregistered, so a later start in the same process (tests) installs fresh providers and histograms.
  metrics.disable();
  endHistograms();
  if (running.tracingSdk) {
    trace.disable();
    propagation.disable();
    context.disable();
  }
}
