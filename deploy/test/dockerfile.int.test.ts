import { existsSync } from "node:fs";
import { GATEWAY_NODE_OPTIONS } from "@sched/testing";
import semver from "semver";
import { describe, expect, it } from "vitest";
import { deployedProcesses, parseDockerfile, readRepoFile, repoRoot, type DockerStage } from "./support.js";

// No Docker engine or hadolint in CI: the image recipe is checked for the
// properties the deployment relies on.
const dockerfile = parseDockerfile(readRepoFile("Dockerfile"));
const stageNamed = (name: string) => dockerfile.stages.find((s) => s.name === name);
const runs = (stage: DockerStage | undefined) => (stage?.instructions ?? []).filter((i) => i.keyword === "RUN").map((i) => i.args);

/** The stage a target ultimately builds on, following `FROM <stage>` links. */
function lineage(name: string): DockerStage[] {
  const chain: DockerStage[] = [];
  for (let stage = stageNamed(name); stage; stage = stageNamed(stage.from)) chain.unshift(stage);
  return chain;
}

function baseImage(stage: DockerStage): string {
  return stage.from.replace(/^\$\{?(\w+)\}?$/, (_, arg: string) => dockerfile.args[arg] ?? "");
}

describe("Dockerfile", () => {
  it("is multi-stage: the build stage installs everything and compiles with tsc -b", () => {
    expect(dockerfile.stages.length).toBeGreaterThan(2);
    const build = runs(stageNamed("build")).join("\n");
    expect(build).toMatch(/\bnpm ci\b(?!.*--omit=dev)/);
    expect(build).toMatch(/\btsc -b\b/);
  });

  it.each(deployedProcesses)("has a target %s that runs the compiled service with node", (name) => {
    const chain = lineage(name);
    expect(chain.length, `no stage named ${name}`).toBeGreaterThan(0);
    const cmd = chain.at(-1)!.instructions.filter((i) => i.keyword === "CMD").at(-1);
    const argv = JSON.parse(cmd?.args ?? "null") as unknown;
    expect(Array.isArray(argv), "CMD in exec form, so node is PID 1 and receives SIGTERM").toBe(true);
    expect((argv as string[])[0]).toBe("node");
    expect((argv as string[]).at(-1)).toBe(`services/${name}/dist/main.js`);
  });

  it("runs the gateway with the node options its test processes run with", () => {
    const cmd = lineage("gateway").at(-1)!.instructions.filter((i) => i.keyword === "CMD").at(-1)!;
    const argv = JSON.parse(cmd.args) as string[];
    // Node's own options, between `node` and the first preload.
    expect(argv.slice(1, argv.indexOf("--import"))).toEqual(GATEWAY_NODE_OPTIONS);
  });

  it.each(deployedProcesses)("preloads %s's telemetry from a module its workspace exports in dist", (name) => {
    const cmd = lineage(name).at(-1)!.instructions.filter((i) => i.keyword === "CMD").at(-1)!;
    const argv = JSON.parse(cmd.args) as string[];
    const preload = argv[argv.indexOf("--import") + 1] ?? "";
    const [, workspace = "", subpath = ""] = /^@sched\/([a-z-]+)\/(.+)$/.exec(preload) ?? [];
    expect(workspace, `no --import @sched/<lib>/<entry> in ${cmd.args}`).not.toBe("");
    const manifest = JSON.parse(readRepoFile(`libs/${workspace}/package.json`)) as { exports: Record<string, { default?: string }> };
    expect(manifest.exports[`./${subpath}`]?.default).toMatch(/^\.\/dist\//);
  });

  it.each(deployedProcesses)("compiles services/%s/src/main.ts to the file its target runs", (name) => {
    expect(existsSync(`${repoRoot}/services/${name}/src/main.ts`)).toBe(true);
    expect(readRepoFile(`services/${name}/tsconfig.json`)).toMatch(/"outDir":\s*"dist"/);
    expect(readRepoFile("tsconfig.json")).toContain(`"services/${name}"`);
  });

  it.each(deployedProcesses)("builds %s's final image from a slim Node image with production dependencies only", (name) => {
    const chain = lineage(name);
    expect(baseImage(chain[0]!)).toMatch(/^node:\d+(\.\d+)*-slim$/);
    const instructions = chain.flatMap((s) => s.instructions);
    const copies = instructions.filter((i) => i.keyword === "COPY" || i.keyword === "ADD");
    // Sources and dev tools stay behind: only other stages' output is copied in.
    for (const copy of copies) expect(copy.args, `${copy.keyword} ${copy.args}`).toMatch(/--from=/);
    const sources = copies.map((c) => /--from=(\S+)/.exec(c.args)?.[1] ?? "");
    const installs = sources.flatMap((source) => lineage(source).flatMap((s) => runs(s)));
    expect(installs.some((args) => /\bnpm ci\b.*--omit=dev/.test(args))).toBe(true);
  });

  it.each(deployedProcesses)("puts in %s's image its own production folder and no other service's", (name) => {
    const copies = lineage(name)
      .flatMap((s) => s.instructions)
      .filter((i) => i.keyword === "COPY")
      .map((i) => i.args);
    expect(copies).toEqual([`--from=production /services/${name}/ ./`]);
    const cut = runs(stageNamed("production")).join("\n");
    expect(cut).toMatch(/node \/tools\/productionFolder\.ts "\$service" \/app "\/services\/\$service"/);
    expect(cut.split(/\bfor service in\b/)[1]?.split(";")[0]?.trim().split(/\s+/)).toContain(name);
  });

  it.each(deployedProcesses)("runs %s as a numeric non-root user", (name) => {
    const users = lineage(name)
      .flatMap((s) => s.instructions)
      .filter((i) => i.keyword === "USER");
    const user = users.at(-1)?.args ?? "root";
    expect(user).toMatch(/^\d+(:\d+)?$/);
    expect(Number(user.split(":")[0])).toBeGreaterThan(0);
  });

  it("runs a Node.js that every installed package's declared engines accept", () => {
    const [, major = ""] = /^node:(\d+)/.exec(dockerfile.args.NODE_IMAGE ?? "") ?? [];
    expect(Number(major), "NODE_IMAGE names a Node.js major").toBeGreaterThanOrEqual(20);
    const lock = JSON.parse(readRepoFile("package-lock.json")) as { packages: Record<string, { engines?: { node?: string } | string[]; dev?: boolean }> };
    // The image's Node is the newest of its major; an engines range that excludes every release of that major is the problem.
    const image = `${major}.99.99`;
    const refused = Object.entries(lock.packages)
      .filter(([path, p]) => path !== "" && !p.dev && p.engines && !Array.isArray(p.engines) && typeof p.engines.node === "string")
      .filter(([, p]) => !semver.satisfies(image, (p.engines as { node: string }).node, { includePrerelease: true }) && !semver.satisfies(`${major}.0.0`, (p.engines as { node: string }).node))
      .map(([path, p]) => `${path}: node ${(p.engines as { node: string }).node}`);
    expect(refused).toEqual([]);
  });

  it("keeps local modules, builds, data and secrets out of the build context", () => {
    const ignored = readRepoFile(".dockerignore")
      .split("\n")
      .map((l) => l.trim());
    for (const entry of ["**/node_modules", "**/dist", "**/.env", ".git", ".data"]) expect(ignored).toContain(entry);
  });
});
