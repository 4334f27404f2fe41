import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { API_VERSION } from "@sched/proto";
import { describe, expect, it } from "vitest";

const clientDir = fileURLToPath(new URL("..", import.meta.url));
const repoFile = (path: string) => readFileSync(fileURLToPath(new URL(`../../../${path}`, import.meta.url)), "utf8");

describe("the typed client as a package", () => {
  it("packs its compiled code with types, a README and an example, and can be published", () => {
    // `npm pack` compiles first (prepack), as a publish would.
    const [packed] = JSON.parse(execFileSync("npm", ["pack", "--dry-run", "--json"], { cwd: clientDir, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })) as { name: string; version: string; files: { path: string }[] }[];
    const files = packed!.files.map((f) => f.path);
    expect(files).toEqual(expect.arrayContaining(["README.md", "package.json", "dist/index.js", "dist/index.d.ts", "dist/schema.d.ts", "examples/quickstart.ts"]));
    expect(files.filter((f) => f.startsWith("src/") || f.startsWith("test/"))).toEqual([]);
    const manifest = JSON.parse(readFileSync(`${clientDir}/package.json`, "utf8")) as { private?: boolean; dependencies: Record<string, string> };
    expect(manifest.private).toBeUndefined();
    expect(Object.keys(manifest.dependencies)).toEqual(["openapi-fetch", "standardwebhooks"]);
  }, 120_000);

  it("is versioned with the API: the package, the OpenAPI document and the changelog say the same version", () => {
    const manifest = JSON.parse(readFileSync(`${clientDir}/package.json`, "utf8")) as { version: string };
    const document = JSON.parse(repoFile("docs/openapi.json")) as { info: { version: string } };
    expect(manifest.version).toBe(API_VERSION);
    expect(document.info.version).toBe(API_VERSION);
    expect(repoFile("CHANGELOG.md")).toMatch(new RegExp(`^## ${API_VERSION.replace(/\./g, "\\.")} `, "m"));
  });
});
