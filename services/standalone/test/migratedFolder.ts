import { openSchema } from "@sched/db";
import { EmbeddedDatabase, initialisedFolderCache } from "@sched/db/embedded";
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { serviceModules } from "../src/services.js";

/**
 * Every test system of the standalone wiring used to run all services'
 * migrations on its fresh embedded database: the longest part of its start
 * (seconds per test file, in a process whose database code has not warmed up
 * yet). They start instead from a copy of one database on which those same
 * migrations ran, kept beside the initialised folder in node_modules/.cache
 * under a name that changes with the migrations' sources, the schema code
 * that runs them and PGlite's version; each service still checks its schema
 * is up to date as it starts. Migrations themselves are tested where they are
 * (the cluster wiring runs them on every start, and libs/db's tests).
 */
let folder: Promise<Blob> | undefined;

export function migratedFolder(): Promise<Blob> {
  folder ??= load();
  return folder;
}

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

async function load(): Promise<Blob> {
  const file = join(initialisedFolderCache(), `migrated-${sourcesDigest()}.tar`);
  const cached = await readFile(file).catch(() => undefined);
  if (cached) return new Blob([cached]);
  const made = await migrateNew();
  try {
    mkdirSync(dirname(file), { recursive: true });
    for (const old of readdirSync(dirname(file)).filter((name) => name.startsWith("migrated-") && name.endsWith(".tar"))) rmSync(join(dirname(file), old), { force: true });
    // Written aside and renamed, so a process starting meanwhile never reads half a file.
    const partial = `${file}.${process.pid}`;
    writeFileSync(partial, Buffer.from(await made.arrayBuffer()));
    renameSync(partial, file);
  } catch {
    // No cache where node_modules is read-only: each process migrates its first database.
  }
  return made;
}

/** A fresh embedded database with every service's migrations run, as a folder. */
async function migrateNew(): Promise<Blob> {
  const database = await EmbeddedDatabase.open();
  try {
    for (const module of serviceModules) {
      const db = await openSchema({ kind: "embedded", database }, module.schema, module.migrations);
      await db.destroy();
    }
    return await database.folder();
  } finally {
    await database.close();
  }
}

/** What the migrated folder follows: every service's migrations, the code that runs them, and PGlite. */
function sourcesDigest(): string {
  const hash = createHash("sha256");
  const files = [
    ...readdirSync(join(ROOT, "services")).flatMap((service) => sourcesUnder(join(ROOT, "services", service, "src", "db", "migrations"))),
    ...sourcesUnder(join(ROOT, "libs", "db", "src")),
  ];
  for (const file of files.sort()) hash.update(file.slice(ROOT.length)).update(readFileSync(file));
  hash.update(readFileSync(join(dirname(createRequire(import.meta.url).resolve("@electric-sql/pglite")), "..", "package.json")));
  return hash.digest("hex").slice(0, 16);
}

function sourcesUnder(folder: string): string[] {
  let entries;
  try {
    entries = readdirSync(folder, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) => (entry.isDirectory() ? sourcesUnder(join(folder, entry.name)) : entry.name.endsWith(".ts") ? [join(folder, entry.name)] : []));
}
