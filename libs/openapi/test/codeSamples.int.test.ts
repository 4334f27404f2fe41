import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { publicRoutes } from "@sched/proto";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import type { CodeSample } from "../src/codeSamples.js";
import { buildOpenApiDocument } from "../src/document.js";
import { EXAMPLES } from "../src/examples.js";

type Operation = { operationId: string; "x-codeSamples"?: CodeSample[] };
const document = buildOpenApiDocument(publicRoutes) as unknown as { paths: Record<string, Record<string, Operation>> };
const operationOf = (method: string, path: string) => document.paths[path.replace(/:(\w+)/g, "{$1}")]![method.toLowerCase()]!;

describe("code samples in the reference", () => {
  it("gives every operation a curl call, and every API-key operation a typed-client call, with the documented example body", () => {
    for (const route of publicRoutes) {
      const samples = operationOf(route.method, route.path)["x-codeSamples"] ?? [];
      const name = `${route.method} ${route.path}`;
      expect(samples.map((s) => s.label), name).toEqual(route.auth === "api-key" ? ["curl", "@sched/client"] : ["curl"]);
      const curl = samples[0]!.source;
      expect(curl, name).toMatch(new RegExp(`-X ${route.method} '?https://api\\.example\\.com/`));
      const body = /-d '(.*)'$/s.exec(curl)?.[1];
      if (route.hasBody) expect(JSON.parse(body!.replace(/'\\''/g, "'")), name).toEqual(EXAMPLES[name]?.request ?? {});
      else expect(body, name).toBeUndefined();
    }
  });

  it("gives typed-client calls that type-check against the client", () => {
    const dir = fileURLToPath(new URL("./.code-samples/", import.meta.url));
    mkdirSync(dir, { recursive: true });
    try {
      const files = publicRoutes
        .filter((r) => r.auth === "api-key")
        .map((route) => {
          const operation = operationOf(route.method, route.path);
          const file = `${dir}${operation.operationId}.ts`;
          writeFileSync(file, `${operation["x-codeSamples"]![1]!.source}\nexport { data, error };\n`);
          return file;
        });
      const program = ts.createProgram(files, {
        target: ts.ScriptTarget.ES2023,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        customConditions: ["@sched/source"],
        types: ["node"],
        strict: true,
        noEmit: true,
        skipLibCheck: true,
      });
      const problems = ts.getPreEmitDiagnostics(program).map((d) => `${d.file?.fileName.slice(dir.length) ?? ""}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`);
      expect(problems).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
