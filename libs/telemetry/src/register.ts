/**
 * Preloaded with `node --import @sched/telemetry/register` (after tsx), before
 * the entry module: the instrumentations must be in place before express and
 * pg are first loaded. Reads the standard OTEL_* variables; with none of them
 * set it does nothing, and the process starts as fast as without it.
 */
import { loadConfigOrExit } from "@sched/config";
import { register } from "node:module";
import { INSTRUMENTED_MODULES, otlpMetricsWanted, telemetryConfigSchema, tracingWanted } from "./config.js";

const config = loadConfigOrExit(telemetryConfigSchema);
if (tracingWanted(config)) {
  // ESM imports bypass require hooks: without this loader hook express is never patched.
  register("@opentelemetry/instrumentation/hook.mjs", import.meta.url, { data: { include: INSTRUMENTED_MODULES } });
}
if (tracingWanted(config) || otlpMetricsWanted(config)) {
  const { startTelemetry } = await import("./sdk.js");
  await startTelemetry({ config });
}
