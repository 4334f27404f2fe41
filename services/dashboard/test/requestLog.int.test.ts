import { openSchema, type Knex } from "@sched/db";
import type { ServedRequest } from "@sched/proto";
import { createTestDatabase, servedRequest } from "@sched/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listRequests, storeRequestBatch } from "../src/db/queries.js";
import { migrations } from "../src/db/migrations/index.js";

const served = (n: number): ServedRequest => servedRequest(n, { status: n % 2 ? 200 : 404 });

/** The request log's batches as the gateways publish them, stored on Postgres and on the embedded database. */
describe.each(["postgres", "pglite"] as const)("a request-log batch, on %s", (target) => {
  let db: Knex;
  let database: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  beforeAll(async () => {
    database = target === "postgres" ? await createTestDatabase() : undefined;
    db = await openSchema(database ? { kind: "postgres", url: database.url } : { kind: "pglite" }, "dashboard", migrations);
  }, 60_000);
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it("is stored once, every request of it, and a batch seen before stores nothing", async () => {
    const batch = [1, 2, 3].map(served);
    expect(await storeRequestBatch(db, "rlb_once", batch)).toBe(true);
    expect(await storeRequestBatch(db, "rlb_once", batch)).toBe(false);
    const listed = await listRequests(db, { userId: "usr_log", mode: "test" }, { since: new Date(0), limit: 10 });
    expect(listed.map((r) => [r.requestId, r.status, r.durationMs, r.at.toISOString()])).toEqual(batch.reverse().map((r) => [r.requestId, r.status, r.durationMs, r.at]));
  });
});
