import { openSchema, type Knex } from "@sched/db";
import { createTestDatabase } from "@sched/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { queueRelearningEveryMode, saveMeetings, savePerson, takeRelearning } from "../src/db/queries.js";
import { relearnQueued } from "../src/consumers/relearning.js";
import { aiRankingService } from "../src/index.js";
import { DAY, HOUR, MONDAY, NOW } from "./people.js";

let db: Knex;
let drop: () => Promise<void>;

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  db = await openSchema({ kind: "postgres", url: database.url }, aiRankingService.schema, aiRankingService.migrations);
});
afterAll(async () => {
  await db?.destroy();
  await drop?.();
});

const ana = { userId: "usr_ana", email: "ana@example.com", name: "Ana", timezone: "UTC", preferences: null };
const meeting = (n: number, attendees: string[]) => {
  const start = MONDAY - n * 7 * DAY + 10 * HOUR;
  return { meetingId: `mtg_${n}`, mode: "test" as const, sequence: 1, confirmed: true, start: new Date(start), end: new Date(start + HOUR), scheduledAt: new Date(start - 3 * DAY), attendees, seriesId: null };
};
const queue = async () => (await db("relearn_queue").orderBy(["email", "mode"]).select("email", "mode")) as Array<{ email: string; mode: string }>;

it("queues each person a change touches once however many changes, and relearns them once", async () => {
  await savePerson(db, { ...ana, updatedAt: new Date(NOW) });
  for (let n = 1; n <= 3; n++) await saveMeetings(db, [meeting(n, [ana.email, "stranger@example.com"])]);
  expect(await queue()).toEqual([
    { email: ana.email, mode: "test" },
    { email: "stranger@example.com", mode: "test" },
  ]);

  // Only Ana has an account: the stranger's row is dropped, not relearned.
  expect(await relearnQueued(db, NOW)).toBe(1);
  const learned = (await db("patterns").where({ user_id: ana.userId, mode: "test" }).first()) as { patterns: { meetings: number } };
  expect(learned.patterns.meetings).toBe(3);
  expect(await queue()).toEqual([]);
});

it("keeps a person queued when the relearning transaction fails, and a repeated change queues no one", async () => {
  await saveMeetings(db, [meeting(4, [ana.email])]);
  expect(await saveMeetings(db, [meeting(4, [ana.email])])).toEqual([]);
  await expect(
    db.transaction(async (trx) => {
      expect(await takeRelearning(trx, 10)).toEqual([{ email: ana.email, mode: "test" }]);
      throw new Error("the database went away");
    }),
  ).rejects.toThrow("went away");
  expect(await queue()).toEqual([{ email: ana.email, mode: "test" }]);
  expect(await relearnQueued(db, NOW)).toBe(1);
  expect(((await db("patterns").where({ user_id: ana.userId }).first()) as { patterns: { meetings: number } }).patterns.meetings).toBe(4);
});

it("a newer version moves the attendance to its attendees and queues who left and who came; an older one changes nothing", async () => {
  await db("relearn_queue").delete();
  await saveMeetings(db, [{ ...meeting(5, [ana.email, "bo@example.com", "cy@example.com"]), sequence: 1 }]);
  await db("relearn_queue").delete();
  expect((await saveMeetings(db, [{ ...meeting(5, [ana.email, "dee@example.com"]), sequence: 2 }])).sort()).toEqual([ana.email, "bo@example.com", "cy@example.com", "dee@example.com"]);
  expect(((await db("attendance").where({ meeting_id: "mtg_5" }).orderBy("email").pluck("email")) as string[])).toEqual([ana.email, "dee@example.com"]);
  expect((await queue()).map((q) => q.email)).toEqual([ana.email, "bo@example.com", "cy@example.com", "dee@example.com"]);
  expect(await saveMeetings(db, [{ ...meeting(5, ["late@example.com"]), sequence: 1 }])).toEqual([]);
  expect(((await db("attendance").where({ meeting_id: "mtg_5" }).orderBy("email").pluck("email")) as string[])).toEqual([ana.email, "dee@example.com"]);
});

it("a person whose account comes after their meetings is queued in every mode they have meetings in", async () => {
  await db("relearn_queue").delete();
  const late = { userId: "usr_late", email: "late@example.com", name: "Late", timezone: "UTC", preferences: null };
  await saveMeetings(db, [meeting(6, [late.email])]);
  await saveMeetings(db, [{ ...meeting(7, [late.email]), mode: "live" }]);
  expect(await relearnQueued(db, NOW)).toBe(0);
  await savePerson(db, { ...late, updatedAt: new Date(NOW) });
  await queueRelearningEveryMode(db, late.email);
  expect(await queue()).toEqual([
    { email: late.email, mode: "live" },
    { email: late.email, mode: "test" },
  ]);
  expect(await relearnQueued(db, NOW)).toBe(2);
  expect(((await db("patterns").where({ user_id: late.userId }).orderBy("mode").pluck("mode")) as string[])).toEqual(["live", "test"]);
});

it("an account change calls for relearning only when it is new or its e-mail or zone moved, not for a new name or preferences", async () => {
  const bo = { userId: "usr_bo", email: "bo@example.com", name: "Bo", timezone: "Europe/Paris", preferences: null };
  const at = (minutes: number) => new Date(NOW + minutes * 60_000);
  expect(await savePerson(db, { ...bo, updatedAt: at(0) })).toEqual({ stored: true, relearn: true });
  expect(await savePerson(db, { ...bo, updatedAt: at(0) })).toEqual({ stored: true, relearn: false });
  expect(await savePerson(db, { ...bo, name: "Bo B.", updatedAt: at(1) })).toEqual({ stored: true, relearn: false });
  const preferences = { preferredTimes: [], avoidDays: ["friday" as const], bufferMinutes: null, maxMeetingsPerDay: null };
  expect(await savePerson(db, { ...bo, preferences, updatedAt: at(2) })).toEqual({ stored: true, relearn: false });
  expect(await savePerson(db, { ...bo, timezone: "America/New_York", updatedAt: at(3) })).toEqual({ stored: true, relearn: true });
  expect(await savePerson(db, { ...bo, timezone: "America/New_York", email: "bo.b@example.com", updatedAt: at(4) })).toEqual({ stored: true, relearn: true });
  // An older version is not kept, whatever it says.
  expect(await savePerson(db, { ...bo, timezone: "Asia/Tokyo", updatedAt: at(1) })).toEqual({ stored: false, relearn: false });
  expect((await db("people").where({ user_id: bo.userId }).first()).timezone).toBe("America/New_York");
});

it("stores a batch of versions in one go: the newest version of each meeting, its attendance, and who to relearn", async () => {
  await db("relearn_queue").delete();
  const created = { ...meeting(20, ["cy@example.com", "di@example.com"]), meetingId: "mtg_batch_1" };
  const moved = { ...created, sequence: 2, attendees: ["cy@example.com", "ed@example.com"] };
  const other = { ...meeting(21, ["fay@example.com"]), meetingId: "mtg_batch_2" };
  // Out of order within the batch, as a redelivery after a crash may hand them over.
  const touched = await saveMeetings(db, [moved, other, created]);
  expect([...new Set(touched)].sort()).toEqual(["cy@example.com", "ed@example.com", "fay@example.com"]);
  expect((await db("meetings").where({ meeting_id: created.meetingId }).first()).sequence).toBe(2);
  expect(await db("attendance").where({ meeting_id: created.meetingId }).orderBy("email").pluck("email")).toEqual(["cy@example.com", "ed@example.com"]);
  expect((await queue()).map((q) => q.email)).toEqual(["cy@example.com", "ed@example.com", "fay@example.com"]);
  // The batch again, or an older one, changes nothing.
  await db("relearn_queue").delete();
  expect(await saveMeetings(db, [created, moved])).toEqual([]);
  expect(await queue()).toEqual([]);
});
