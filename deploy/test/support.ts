import { gatewayConfigSchema } from "@sched/gateway";
import { commonConfigSchema } from "@sched/runtime";
import { serviceModules } from "@sched/standalone";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse, parseAllDocuments } from "yaml";
import type { z } from "zod";

/** The repository's root folder. */
export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

/** A file of the repository as text. */
export function readRepoFile(path: string): string {
  return readFileSync(`${repoRoot}/${path}`, "utf8");
}

/** One YAML document; merge keys (`<<`) are resolved as Compose resolves them. */
export function readYaml(path: string): unknown {
  return parse(readRepoFile(path), { merge: true });
}

/** Every document of a multi-document YAML stream, such as kustomize's output. */
export function parseYamlStream(text: string): unknown[] {
  return parseAllDocuments(text).map((doc) => {
    if (doc.errors.length > 0) throw new Error(doc.errors.map((e) => e.message).join("\n"));
    return doc.toJS() as unknown;
  });
}

/** Every process that runs in production, which the deployment files must run: each bus service and the gateway. */
export const deployedProcesses: readonly string[] = [...serviceModules.map((m) => m.name), "gateway"];

/** The health and metrics port every process serves /livez, /readyz and /metrics on. */
export const HEALTH_PORT = 9464;

/**
 * The environment variables a process reads: the keys of its zod schemas.
 * A name outside them in a deployment file is a typo the process would
 * silently ignore.
 */
function variablesReadBy(process: string): Set<string> {
  return new Set(Object.keys(schemaShapeOf(process)));
}

/** The variables a process refuses to start without: those its schemas give no default. */
export function variablesRequiredBy(process: string): string[] {
  return Object.entries(schemaShapeOf(process))
    .filter(([, schema]) => !schema.safeParse(undefined).success)
    .map(([variable]) => variable);
}

function schemaShapeOf(process: string): Record<string, z.ZodType> {
  const own = process === "gateway" ? gatewayConfigSchema.shape : (serviceModules.find((m) => m.name === process)?.config.shape ?? {});
  return { ...commonConfigSchema.shape, ...own };
}

/** Whether a process reads the variable (the OTEL_* ones are the OpenTelemetry SDK's). */
export function isReadBy(process: string, variable: string): boolean {
  return variable.startsWith("OTEL_") || variablesReadBy(process).has(variable);
}

/** A stage of the Dockerfile: its base, its name and its instructions in order. */
export interface DockerStage {
  from: string;
  name?: string;
  instructions: { keyword: string; args: string }[];
}

/** The Dockerfile's global ARG defaults and its stages (comments and line continuations resolved). */
export function parseDockerfile(text: string): { args: Record<string, string>; stages: DockerStage[] } {
  const logical = text
    .replace(/\\\r?\n/g, " ")
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
  const args: Record<string, string> = {};
  const stages: DockerStage[] = [];
  for (const line of logical) {
    const [, keyword = "", rest = ""] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const upper = keyword.toUpperCase();
    if (upper === "FROM") {
      const [, from = "", name] = /^(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest) ?? [];
      stages.push({ from, name, instructions: [] });
    } else if (stages.length === 0) {
      if (upper === "ARG") {
        const [key = "", value = ""] = rest.split("=", 2);
        args[key] = value;
      }
    } else {
      stages.at(-1)!.instructions.push({ keyword: upper, args: rest.replace(/\s+/g, " ") });
    }
  }
  return { args, stages };
}
