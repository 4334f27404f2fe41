import type { PGliteOptions } from "@electric-sql/pglite";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join, sep } from "node:path";

/**
 * A new PGlite runs initdb, its longest step by far (seconds, and many more on
 * a busy machine). Every new embedded database starts instead from a copy of
 * one freshly initialised folder: taken from the first database made on an
 * installation of PGlite, right after its initdb, and kept in
 * node_modules/.cache, so only the very first start pays initdb; the process
 * keeps it in memory for the databases it opens after (tests open many).
 */
let template: Promise<Blob | undefined> | undefined;

/** The freshly initialised folder made with `initOptions`, as a tarball for PGlite's `loadDataDir`, once one was kept. */
export function initialisedFolder(initOptions: PGliteOptions): Promise<Blob | undefined> {
  template ??= readFile(cacheFile(initOptions)).then(
    (cached) => new Blob([cached]),
    () => undefined,
  );
  return template;
}

/** Keeps the folder of `pglite`, a database just initialised with `initOptions` and not yet written to, for the next new ones. */
export async function keepInitialisedFolder(pglite: { dumpDataDir(): Promise<Blob> }, initOptions: PGliteOptions): Promise<void> {
  const made = await pglite.dumpDataDir();
  template = Promise.resolve(made);
  // Written aside and renamed, so a process starting meanwhile never reads half a file.
  try {
    const file = cacheFile(initOptions);
    mkdirSync(dirname(file), { recursive: true });
    const partial = `${file}.${process.pid}`;
    writeFileSync(partial, Buffer.from(await made.arrayBuffer()));
    renameSync(partial, file);
  } catch {
    // No cache where node_modules is read-only: each process initialises its first database.
  }
}

/** Where initialised folders are kept: node_modules/.cache/sched-embedded-postgres. */
export function initialisedFolderCache(): string {
  const entry = createRequire(import.meta.url).resolve("@electric-sql/pglite");
  return join(nodeModulesOf(entry), ".cache", "sched-embedded-postgres");
}

/** <cache>/pglite-<PGlite version><initdb options>.tar (uncompressed: made three times faster, loaded as fast) */
function cacheFile(initOptions: PGliteOptions): string {
  const entry = createRequire(import.meta.url).resolve("@electric-sql/pglite");
  const { version } = JSON.parse(readFileSync(join(nodeModulesOf(entry), "@electric-sql", "pglite", "package.json"), "utf8")) as { version: string };
  const flavour = (initOptions.initDbStartParams ?? []).join("").replace(/[^a-z0-9]+/gi, "-");
  return join(initialisedFolderCache(), `pglite-${version}${flavour}.tar`);
}

function nodeModulesOf(file: string): string {
  return file.slice(0, file.lastIndexOf(`${sep}node_modules${sep}`) + `${sep}node_modules`.length);
}
