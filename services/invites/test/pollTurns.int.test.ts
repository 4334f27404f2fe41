import { openSchema, type Knex } from "@sched/db";
import { createTestDatabase, eventually } from "@sched/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimPollTurns } from "../src/db/queries.js";
import { invitesService } from "../src/index.js";

describe("turns at polling connections (Postgres)", () => {
  let db: Knex;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    db = await openSchema({ kind: "postgres", url: database.url, poolMax: 8 }, invitesService.schema, invitesService.migrations);
  });
  afterAll(async () => {
    await db?.destroy();
    await drop?.();
  });

  it("gives each due connection to one of the replicas claiming together, to none again within the interval, and again after it", async () => {
    const ids = Array.from({ length: 40 }, (_, i) => `cal_turns${String(i).padStart(19, "0")}`);
    // Six replicas claim the same connections at once, over their own pool connections.
    const claims = await Promise.all(Array.from({ length: 6 }, () => claimPollTurns(db, ids, 1_000)));
    const taken = claims.flatMap((c) => [...c]);
    expect(taken.sort()).toEqual([...ids].sort());
    expect(await claimPollTurns(db, ids, 1_000)).toEqual(new Set());
    // Each comes due an interval after its own turn, and is taken once then.
    const again = new Set<string>();
    await eventually(async () => {
      for (const id of await claimPollTurns(db, ids, 60_000)) {
        expect(again.has(id)).toBe(false);
        again.add(id);
      }
      return again.size === ids.length ? true : undefined;
    }, 10_000, 100);
    expect(await claimPollTurns(db, [], 1_000)).toEqual(new Set());
  });
});
