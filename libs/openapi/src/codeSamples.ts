import type { RouteDef } from "@sched/proto";
import type { z } from "zod";

/** One entry of Redoc's `x-codeSamples`: a ready-to-run call of the operation. */
export interface CodeSample {
  lang: "Shell" | "TypeScript";
  label: string;
  source: string;
}

const BASE_URL = "https://api.example.com";

/** The path with each parameter's documented example (`:id` → `mtg_…`); a parameter without one keeps a placeholder. */
function examplePath(route: RouteDef, params: z.ZodObject): { path: string; values: Record<string, string> } {
  const values: Record<string, string> = {};
  const path = route.path.replace(/:(\w+)/g, (_, name: string) => {
    const example = (params.shape[name] as z.ZodType | undefined)?.meta()?.example;
    values[name] = typeof example === "string" ? example : `<${name}>`;
    return values[name];
  });
  return { path, values };
}

/** The query parameters a call cannot leave out, with their documented examples. */
function requiredQuery(query: z.ZodObject): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [name, schema] of Object.entries(query.shape as Record<string, z.ZodType>)) {
    if (schema.safeParse(undefined).success) continue;
    const example = schema.meta()?.example;
    values[name] = typeof example === "string" ? example : `<${name}>`;
  }
  return values;
}

/** A value as TypeScript source: JSON with plain keys unquoted. */
const literal = (value: unknown, indent?: number) => JSON.stringify(value, null, indent).replace(/"([A-Za-z_$][\w$]*)":/g, "$1:");

/** A shell word in single quotes, whatever it holds. */
const quoted = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

function curl(route: RouteDef, path: string, query: Record<string, string>, body: unknown): string {
  const search = new URLSearchParams(query).toString();
  const lines = [`curl -s -X ${route.method} ${search ? quoted(`${BASE_URL}${path}?${search}`) : `${BASE_URL}${path}`}`];
  if (route.auth === "api-key") lines.push(`-H "Authorization: Bearer $SCHED_API_KEY"`);
  if (route.auth === "admin") lines.push(`-H "Authorization: Bearer $ADMIN_TOKEN"`);
  if (route.idempotent) lines.push(`-H "Idempotency-Key: $(uuidgen)"`);
  if (body !== undefined) lines.push(`-H "Content-Type: application/json"`, `-d ${quoted(JSON.stringify(body))}`);
  return lines.join(" \\\n  ");
}

/** The call through the typed client (`@sched/client`), for the routes an API key calls. */
function typedClient(route: RouteDef, values: Record<string, string>, query: Record<string, string>, body: unknown): string {
  const inline = (record: Record<string, string>) => literal(record).replace(/^\{(.*)\}$/, "{ $1 }").replace(/(\w):"/g, '$1: "').replace(/",(\w)/g, '", $1');
  const params: string[] = [];
  if (Object.keys(values).length > 0) params.push(`path: ${inline(values)}`);
  if (Object.keys(query).length > 0) params.push(`query: ${inline(query)}`);
  if (route.idempotent) params.push(`header: { "Idempotency-Key": crypto.randomUUID() }`);
  const options: string[] = [];
  if (params.length > 0) options.push(`  params: { ${params.join(", ")} },`);
  if (body !== undefined) options.push(`  body: ${literal(body, 2).replace(/\n/g, "\n  ")},`);
  const openApiPath = route.path.replace(/:(\w+)/g, "{$1}");
  const call = options.length > 0 ? `client.${route.method}("${openApiPath}", {\n${options.join("\n")}\n})` : `client.${route.method}("${openApiPath}")`;
  return [
    `import { createSchedulingClient } from "@sched/client";`,
    "",
    `const client = createSchedulingClient({ baseUrl: "${BASE_URL}", apiKey: process.env.SCHED_API_KEY ?? "" });`,
    `const { data, error } = await ${call};`,
  ].join("\n");
}

/**
 * The operation's code samples for the reference page: curl for every route,
 * and the typed client for those an API key calls, both with the documented
 * example request.
 */
export function codeSamples(route: RouteDef, parts: { params: z.ZodObject; query: z.ZodObject }, exampleBody: unknown): CodeSample[] {
  const { path, values } = examplePath(route, parts.params);
  const query = requiredQuery(parts.query);
  const body = route.hasBody ? (exampleBody ?? {}) : undefined;
  const samples: CodeSample[] = [{ lang: "Shell", label: "curl", source: curl(route, path, query, body) }];
  if (route.auth === "api-key") samples.push({ lang: "TypeScript", label: "@sched/client", source: typedClient(route, values, query, body) });
  return samples;
}
