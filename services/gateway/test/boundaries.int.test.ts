import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, it } from "vitest";

const FIXTURE = fileURLToPath(new URL("./fixtures/loadedModules.ts", import.meta.url));

it("the gateway process loads no database code (no knex, pg or PGlite in memory)", async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ["--conditions=@sched/source", "--import", "tsx", FIXTURE]);
  const loaded: string[] = JSON.parse(stdout);
  // The fixture did load the gateway's dependencies: express is there.
  expect(loaded.some((path) => path.includes("/node_modules/express/"))).toBe(true);
  expect(loaded.filter((path) => /\/node_modules\/(knex|pg|pg-pool|@electric-sql\/pglite)\//.test(path))).toEqual([]);
}, 60_000);
