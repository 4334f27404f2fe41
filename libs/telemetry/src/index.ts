export { startTelemetry, shutdownTelemetry, tracingEnabled, serveMetrics, type TelemetryOptions, type TelemetryState } from "./sdk.js";
export { telemetryConfigSchema, type TelemetryConfig } from "./config.js";
export {
  SpanKind,
  currentTraceContext,
  traceContextIn,
  extractTraceContext,
  idAttributes,
  injectTraceContext,
  inSpan,
  linkTo,
  markSpanFailed,
  setActiveSpanAttributes,
  withTraceContext,
  type Attributes,
  type Context,
  type Span,
  type SpanOptions,
  type TraceCarrier,
} from "./spans.js";
export {
  now,
  observeOutboxLag,
  recordBusRequest,
  recordEventConsumed,
  recordEventPublished,
  recordHttpRequest,
  recordInviteDelivery,
  type BusOutcome,
  type ConsumeOutcome,
} from "./metrics.js";
export { nameRoute, withHttpMetrics, UNMATCHED_ROUTE } from "./http.js";
