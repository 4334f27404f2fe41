// The folder one service's image holds: its own workspace and the workspaces it
// depends on (package.json and dist/ each), and only the installed packages its
// production code can reach. `npm ci --omit=dev -w services/<name>` is not
// enough: every workspace of the lock file counts as a production package, so
// the test tools' dependencies would come along.
//
//   node deploy/productionFolder.ts <service> <installed> <out>
//
// <installed> holds package-lock.json, a production install (`npm ci
// --omit=dev`) and every workspace's dist/; <out> is written with the same
// layout. Erasable TypeScript only: Node runs it without a compiler.
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { dirname, join, relative } from "node:path";

interface LockedPackage {
  link?: boolean;
  resolved?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  /** Never followed: the image runs no test or build tool. */
  devDependencies?: Record<string, string>;
}

/** The lock file's packages by location ("" the root, "node_modules/x", "libs/y"). */
type LockedPackages = Readonly<Record<string, LockedPackage>>;

/** Where the package that `from` asks for by `name` is installed: the nearest node_modules up the tree, as Node looks. */
function resolveFrom(packages: LockedPackages, from: string, name: string): string | undefined {
  let dir = from;
  for (;;) {
    const candidate = dir === "" ? `node_modules/${name}` : `${dir}/node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (dir === "") return undefined;
    const nested = dir.lastIndexOf("/node_modules/");
    dir = nested === -1 ? "" : dir.slice(0, nested);
  }
}

/**
 * Every location the workspace's production code can load: installed
 * packages, workspace links and the workspaces they point to. Required peers
 * count (the OpenTelemetry instrumentations load @opentelemetry/api as one);
 * development and optional peer dependencies do not.
 */
export function productionClosure(packages: LockedPackages, workspace: string): Set<string> {
  const reached = new Set<string>([workspace]);
  const pending = [workspace];
  for (let location = pending.pop(); location !== undefined; location = pending.pop()) {
    const pkg = packages[location] ?? {};
    const optionalPeers = new Set(Object.entries(pkg.peerDependenciesMeta ?? {}).flatMap(([name, meta]) => (meta.optional ? [name] : [])));
    const wanted = [
      ...Object.keys(pkg.dependencies ?? {}),
      ...Object.keys(pkg.optionalDependencies ?? {}),
      ...Object.keys(pkg.peerDependencies ?? {}).filter((name) => !optionalPeers.has(name)),
    ];
    for (const name of wanted) {
      const found = resolveFrom(packages, location, name);
      if (!found) continue; // an optional dependency not installed on this platform
      const target = packages[found]?.link ? packages[found].resolved : found;
      for (const next of [found, target]) {
        if (next === undefined || reached.has(next)) continue;
        reached.add(next);
        pending.push(next);
      }
    }
  }
  return reached;
}

/** Copies what `productionClosure` reached from `installed` to `out`: packages without their nested node_modules (those reached are copied on their own), links as links. */
function writeFolder(packages: LockedPackages, closure: Set<string>, installed: string, out: string): void {
  for (const location of [...closure].sort()) {
    const pkg = packages[location] ?? {};
    const source = join(installed, location);
    const target = join(out, location);
    if (pkg.link) {
      mkdirSync(dirname(target), { recursive: true });
      symlinkSync(relative(dirname(target), join(out, pkg.resolved ?? "")), target);
    } else if (location.includes("node_modules/")) {
      if (!existsSync(source)) continue;
      cpSync(source, target, { recursive: true, verbatimSymlinks: true, filter: (path) => !relative(source, path).split("/").includes("node_modules") });
    } else {
      // A workspace: its manifest and compiled code.
      mkdirSync(target, { recursive: true });
      cpSync(join(source, "package.json"), join(target, "package.json"));
      if (existsSync(join(source, "dist"))) cpSync(join(source, "dist"), join(target, "dist"), { recursive: true });
    }
  }
}

if (import.meta.filename === process.argv[1]) {
  const [service, installed, out] = process.argv.slice(2);
  if (!service || !installed || !out) {
    console.error("usage: node deploy/productionFolder.ts <service> <installed> <out>");
    process.exit(2);
  }
  const { packages } = JSON.parse(readFileSync(join(installed, "package-lock.json"), "utf8")) as { packages: LockedPackages };
  if (!packages[`services/${service}`]) {
    console.error(`no workspace services/${service} in the lock file`);
    process.exit(2);
  }
  writeFolder(packages, productionClosure(packages, `services/${service}`), installed, out);
}
