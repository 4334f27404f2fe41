import { openSchema } from "@sched/db";
import { createTestDatabase } from "@sched/testing";
import { expect, it } from "vitest";
import { createInvites } from "../src/db/migrations/001_create_invites.js";
import { migrations } from "../src/db/migrations/index.js";

it("a schema created by the first migration alone gains the lease owner and trace context columns", async () => {
  const database = await createTestDatabase();
  try {
    const first = await openSchema({ kind: "postgres", url: database.url }, "invites", [createInvites]);
    await first.destroy();
    const db = await openSchema({ kind: "postgres", url: database.url }, "invites", migrations);
    try {
      const { rows } = await db.raw(
        "select column_name from information_schema.columns where table_schema = 'invites' and table_name = 'meeting_changes' and column_name in ('lease_owner', 'trace_context') order by 1",
      );
      expect(rows.map((r: { column_name: string }) => r.column_name)).toEqual(["lease_owner", "trace_context"]);
    } finally {
      await db.destroy();
    }
  } finally {
    await database.drop();
  }
});
