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

it("a schema at the second migration keeps, from its ledger, the pending changes' meetings and each participant's newest settled delivery", async () => {
  const database = await createTestDatabase();
  try {
    const earlier = await openSchema({ kind: "postgres", url: database.url }, "invites", migrations.slice(0, 2));
    const meeting = { id: "mtg_migrated0000000000000", title: "T" };
    const row = (sequence: number, state: string) => ({ meeting_id: meeting.id, sequence, mode: "live", organizer_user_id: "usr_1", organizer_email: "o@example.com", meeting, state });
    await earlier("meeting_changes").insert([row(1, "done"), row(2, "done"), row(3, "pending")]);
    const delivery = (sequence: number, email: string, state: string) => ({ meeting_id: meeting.id, sequence, email, kind: "request", channel: "email", state });
    await earlier("deliveries").insert([
      delivery(1, "a@example.com", "sent"),
      delivery(1, "b@example.com", "sent"),
      delivery(2, "a@example.com", "sent"),
      delivery(2, "b@example.com", "failed"),
      delivery(3, "a@example.com", "pending"),
    ]);
    await earlier.destroy();
    const db = await openSchema({ kind: "postgres", url: database.url }, "invites", migrations);
    try {
      expect((await db("meeting_changes").orderBy("sequence").select("sequence", "meeting")).map((c) => [c.sequence, c.meeting])).toEqual([
        [1, null],
        [2, null],
        [3, meeting],
      ]);
      expect((await db("deliveries").orderBy(["sequence", "email"]).select("sequence", "email", "state")).map((d) => [d.sequence, d.email, d.state])).toEqual([
        [1, "b@example.com", "sent"],
        [2, "a@example.com", "sent"],
        [2, "b@example.com", "failed"],
        [3, "a@example.com", "pending"],
      ]);
    } finally {
      await db.destroy();
    }
  } finally {
    await database.drop();
  }
});
