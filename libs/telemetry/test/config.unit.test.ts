import { parseConfig } from "@sched/config";
import { describe, expect, it } from "vitest";
import { metricsProtocol, otlpMetricsWanted, serviceNameFromEntry, telemetryConfigSchema, tracingWanted } from "../src/config.js";

const config = (env: Record<string, string>) => parseConfig(telemetryConfigSchema, env);

describe("what the OTEL_* variables switch on", () => {
  it("with nothing set, traces nothing and pushes no metrics", () => {
    expect(tracingWanted(config({}))).toBe(false);
    expect(otlpMetricsWanted(config({}))).toBe(false);
  });

  it("with an OTLP endpoint, traces and pushes metrics; empty values count as unset", () => {
    const c = config({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" });
    expect(tracingWanted(c)).toBe(true);
    expect(otlpMetricsWanted(c)).toBe(true);
    expect(tracingWanted(config({ OTEL_EXPORTER_OTLP_ENDPOINT: " " }))).toBe(false);
  });

  it("a per-signal endpoint switches on that signal only", () => {
    const traces = config({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://collector:4318/v1/traces" });
    expect([tracingWanted(traces), otlpMetricsWanted(traces)]).toEqual([true, false]);
    const metrics = config({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "http://collector:4318/v1/metrics" });
    expect([tracingWanted(metrics), otlpMetricsWanted(metrics)]).toEqual([false, true]);
  });

  it("an exporter list decides over the endpoint: none turns off, console turns on", () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" };
    expect(tracingWanted(config({ ...endpoint, OTEL_TRACES_EXPORTER: "none" }))).toBe(false);
    expect(otlpMetricsWanted(config({ ...endpoint, OTEL_METRICS_EXPORTER: "prometheus" }))).toBe(false);
    expect(tracingWanted(config({ OTEL_TRACES_EXPORTER: "Console" }))).toBe(true);
  });

  it("OTEL_SDK_DISABLED=true turns everything off, whatever else is set", () => {
    const c = config({ OTEL_SDK_DISABLED: "TRUE", OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_TRACES_EXPORTER: "otlp" });
    expect([tracingWanted(c), otlpMetricsWanted(c)]).toEqual([false, false]);
    expect(config({ OTEL_SDK_DISABLED: "no" }).OTEL_SDK_DISABLED).toBe(false);
  });

  it("pushes metrics over the configured OTLP protocol, the metrics-specific one first, http/protobuf by default", () => {
    expect(metricsProtocol(config({}))).toBe("http/protobuf");
    expect(metricsProtocol(config({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }))).toBe("grpc");
    expect(metricsProtocol(config({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc", OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: "http/json" }))).toBe("http/json");
    expect(metricsProtocol(config({ OTEL_EXPORTER_OTLP_PROTOCOL: "carrier-pigeon" }))).toBe("http/protobuf");
  });

  it("refuses a metric export interval that is not a positive number", () => {
    expect(() => config({ OTEL_METRIC_EXPORT_INTERVAL: "soon" })).toThrow(/OTEL_METRIC_EXPORT_INTERVAL/);
    expect(config({ OTEL_METRIC_EXPORT_INTERVAL: "15000" }).OTEL_METRIC_EXPORT_INTERVAL).toBe(15_000);
  });
});

describe("the default service name", () => {
  it("is the service folder of the entry script, in source or built form", () => {
    expect(serviceNameFromEntry("/app/services/meetings/src/main.ts")).toBe("meetings");
    expect(serviceNameFromEntry("/app/services/gateway/dist/main.js")).toBe("gateway");
  });

  it("is `sched` for any other entry", () => {
    expect(serviceNameFromEntry("/app/services/standalone/src/cluster.ts")).toBe("sched");
    expect(serviceNameFromEntry(undefined)).toBe("sched");
  });
});
