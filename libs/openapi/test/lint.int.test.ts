import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "../src/index.js";

const ROOT = resolve(import.meta.dirname, "../../..");

interface LintProblem {
  ruleId: string;
  severity: "error" | "warn";
  message: string;
  location: Array<{ pointer?: string }>;
}

describe("the OpenAPI document under Redocly's lint (recommended rules)", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "openapi-lint-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("has no errors and no warnings", async () => {
    const file = join(dir, "openapi.json");
    await writeFile(file, JSON.stringify(buildOpenApiDocument(), null, 2));
    const run = await promisify(execFile)(
      join(ROOT, "node_modules/.bin/redocly"),
      ["lint", file, "--config", join(ROOT, "libs/openapi/redocly.yaml"), "--format", "json", "--max-problems", "1000"],
      { cwd: ROOT, env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" } },
    ).catch((err: { stdout?: string; stderr?: string }) => ({ stdout: err.stdout ?? "", stderr: err.stderr ?? "" }));
    const report = JSON.parse(run.stdout) as { totals: { errors: number; warnings: number }; problems: LintProblem[] };
    const problems = report.problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 30_000);
});
