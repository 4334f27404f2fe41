import { createTestDatabase } from "@sched/testing";
import { afterAll } from "vitest";
import type { DatabaseTarget } from "../src/index.js";

/** Fresh databases for one test file, each dropped once the file's tests are done. */
export function testDatabases() {
  const drops: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const drop of drops) await drop();
  });
  const postgresUrl = async (): Promise<string> => {
    const database = await createTestDatabase();
    drops.push(database.drop);
    return database.url;
  };
  return {
    postgresUrl,
    /** An empty Postgres database of its own, or an in-memory PGlite. */
    target: async (kind: "postgres" | "pglite", poolMax?: number): Promise<DatabaseTarget> =>
      kind === "pglite" ? { kind: "pglite" } : { kind: "postgres", url: await postgresUrl(), ...(poolMax ? { poolMax } : {}) },
  };
}
