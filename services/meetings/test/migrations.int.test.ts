import { openSchema } from "@sched/db";
import { createTestDatabase } from "@sched/testing";
import { expect, it } from "vitest";
import { migrations } from "../src/db/migrations/index.js";

it("meetings stored before list items were kept gain theirs (with the series fields, null), and the column is then always filled", async () => {
  const database = await createTestDatabase();
  try {
    const before = await openSchema({ kind: "postgres", url: database.url }, "meetings", migrations.filter((m) => m.name < "006"));
    const title = 'Q4 "plan" \\ tab\there \u2028 \u00e9t\u00e9 \ud83d\udcc5';
    await before.raw(
      `insert into meetings (id, mode, organizer_id, organizer_email, title, description, start_time, end_time, duration, participants, status, sequence, created_at, updated_at)
       values ('mtg_old', 'live', 'usr_1', 'org@example.com', ?, 'd', '2031-05-06T07:08:09Z', '2031-05-06T08:08:09Z', '1 hour', array['a@example.com', 'b@example.com'], 'draft', 1, now(), now())`,
      [title],
    );
    await before.destroy();
    const db = await openSchema({ kind: "postgres", url: database.url }, "meetings", migrations);
    try {
      const item = async () => ((await db("meetings").where({ id: "mtg_old" }).first("list_item")) as { list_item: string }).list_item;
      expect(JSON.parse(await item())).toEqual({
        id: "mtg_old",
        title,
        startTime: "2031-05-06T07:08:09Z",
        duration: "1 hour",
        participants: ["a@example.com", "b@example.com"],
        status: "draft",
        organizer: "org@example.com",
        recurrence: null,
        seriesId: null,
        originalStartTime: null,
      });
      await db("meetings").where({ id: "mtg_old" }).update({ status: "confirmed", list_item: "stale" });
      expect(JSON.parse(await item())).toMatchObject({ id: "mtg_old", status: "confirmed" });
      await expect(db.raw("alter table meetings disable trigger list_item; update meetings set list_item = null")).rejects.toThrow(/null value/);
    } finally {
      await db.destroy();
    }
  } finally {
    await database.drop();
  }
});

it("claims an earlier release left in progress expire a minute after they were made, as that release let them be taken over", async () => {
  const database = await createTestDatabase();
  try {
    const before = await openSchema({ kind: "postgres", url: database.url }, "meetings", migrations.filter((m) => m.name < "007"));
    const row = (key: string, state: string, claimedAgo: string) =>
      before.raw(
        `insert into idempotency_keys (api_key_id, idem_key, fingerprint, claim_token, state, response_status, claimed_at, expires_at)
         values ('key_1', ?, 'f', 't', ?, ?, now() - ?::interval, now() + interval '24 hours')`,
        [key, state, state === "done" ? 201 : null, claimedAgo],
      );
    await row("dead", "in_progress", "2 minutes");
    await row("running", "in_progress", "1 second");
    await row("done", "done", "2 minutes");
    await before.destroy();
    const db = await openSchema({ kind: "postgres", url: database.url }, "meetings", migrations);
    try {
      const left = await db("idempotency_keys").select("idem_key", db.raw("extract(epoch from expires_at - now())::float8 as seconds")).orderBy("idem_key");
      const seconds = Object.fromEntries(left.map((r: { idem_key: string; seconds: number }) => [r.idem_key, r.seconds]));
      expect(seconds.dead).toBeLessThanOrEqual(0);
      expect(seconds.running).toBeGreaterThan(0);
      expect(seconds.running).toBeLessThanOrEqual(60);
      expect(seconds.done).toBeGreaterThan(23 * 3600);
    } finally {
      await db.destroy();
    }
  } finally {
    await database.drop();
  }
});

it("series stored before 011 gain a version, and the participants of their exceptions are found by e-mail", async () => {
  const database = await createTestDatabase();
  try {
    const before = await openSchema({ kind: "postgres", url: database.url }, "meetings", migrations.filter((m) => m.name < "012"));
    await before.raw(
      `insert into meeting_series (id, mode, organizer_id, organizer_email, title, description, start_time, duration, participants, status, sequence,
                                   created_at, updated_at, recurrence, time_zone, last_end)
       values ('mtg_series', 'test', 'usr_1', 'org@example.com', 'Daily', '', '2031-05-05T09:00:00Z', '30 mins', array['a@example.com'], 'confirmed', 2,
               now(), now(), 'FREQ=DAILY;COUNT=3', 'UTC', '2031-05-07T09:30:00Z')`,
    );
    await before.raw("insert into series_participants (series_id, email, mode, last_end) values ('mtg_series', 'a@example.com', 'test', '2031-05-07T09:30:00Z')");
    await before.raw(
      `insert into meeting_exceptions (series_id, original_start, title, description, start_time, end_time, duration, participants, status, sequence)
       values ('mtg_series', '2031-05-06T09:00:00Z', 'Daily', '', '2031-05-06T09:00:00Z', '2031-05-06T09:30:00Z', '30 mins', array['a@example.com', 'b@example.com'], 'confirmed', 2)`,
    );
    await before.destroy();
    const db = await openSchema({ kind: "postgres", url: database.url }, "meetings", migrations);
    try {
      const emails = ((await db("series_participants").where({ series_id: "mtg_series" }).orderBy("email")) as { email: string }[]).map((r) => r.email);
      expect(emails).toEqual(["a@example.com", "b@example.com"]);
      expect(Number(((await db("meeting_series").where({ id: "mtg_series" }).first("version")) as { version: string }).version)).toBe(0);
    } finally {
      await db.destroy();
    }
  } finally {
    await database.drop();
  }
});

it("series stored before 013 with an occurrence moved past their rule's end widen their range to it, on the series and its participants", async () => {
  const database = await createTestDatabase();
  try {
    const before = await openSchema({ kind: "postgres", url: database.url }, "meetings", migrations.filter((m) => m.name < "013"));
    for (const id of ["mtg_moved", "mtg_kept"]) {
      await before.raw(
        `insert into meeting_series (id, mode, organizer_id, organizer_email, title, description, start_time, duration, participants, status, sequence,
                                     created_at, updated_at, recurrence, time_zone, last_end)
         values (?, 'test', 'usr_1', 'org@example.com', 'Daily', '', '2031-05-05T09:00:00Z', '30 mins', array['a@example.com'], 'confirmed', 2,
                 now(), now(), 'FREQ=DAILY;COUNT=3', 'UTC', '2031-05-07T09:30:00Z')`,
        [id],
      );
    }
    // The last occurrence of one moved a week on, by someone the series does not list; the other's moved within its range.
    for (const [id, start, end] of [["mtg_moved", "2031-05-14T15:00:00Z", "2031-05-14T15:30:00Z"], ["mtg_kept", "2031-05-06T15:00:00Z", "2031-05-06T15:30:00Z"]]) {
      await before.raw(
        `insert into meeting_exceptions (series_id, original_start, title, description, start_time, end_time, duration, participants, status, sequence)
         values (?, '2031-05-07T09:00:00Z', 'Daily', '', ?, ?, '30 mins', array['a@example.com', 'b@example.com'], 'confirmed', 2)`,
        [id, start, end],
      );
      await before.raw(
        `insert into series_participants (series_id, email, mode, last_end) values (?, 'a@example.com', 'test', '2031-05-07T09:30:00Z'), (?, 'b@example.com', 'test', '2031-05-07T09:30:00Z')`,
        [id, id],
      );
    }
    await before.destroy();
    const db = await openSchema({ kind: "postgres", url: database.url }, "meetings", migrations);
    try {
      const ranges = (await db.raw(
        `select s.id, s.last_end as series_end, array_agg(p.last_end order by p.email) as participant_ends
           from meeting_series s join series_participants p on p.series_id = s.id group by s.id, s.last_end order by s.id`,
      )) as { rows: { id: string; series_end: Date; participant_ends: Date[] }[] };
      expect(ranges.rows.map((r) => [r.id, r.series_end.toISOString(), r.participant_ends.map((d) => new Date(d).toISOString())])).toEqual([
        ["mtg_kept", "2031-05-07T09:30:00.000Z", ["2031-05-07T09:30:00.000Z", "2031-05-07T09:30:00.000Z"]],
        ["mtg_moved", "2031-05-14T15:30:00.000Z", ["2031-05-14T15:30:00.000Z", "2031-05-14T15:30:00.000Z"]],
      ]);
    } finally {
      await db.destroy();
    }
  } finally {
    await database.drop();
  }
});
