import { openSchema, type Knex } from "@sched/db";
import { createTestDatabase } from "@sched/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { historyOf, queueRelearningEveryMode, saveMeetings, savePerson, takeRelearning } from "../src/db/queries.js";
import { HISTORY_DAYS, learnPatterns } from "../src/domain/patterns.js";
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
      expect((await takeRelearning(trx, 10)).map(({ email, mode }) => ({ email, mode }))).toEqual([{ email: ana.email, mode: "test" }]);
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

it("stores a batch of first versions without reading the attendance already kept", async () => {
  await saveMeetings(db, Array.from({ length: 30 }, (_, n) => ({ ...meeting(40 + n, [ana.email, "gus@example.com"]), meetingId: `mtg_kept_${n}` })));
  const rowsScanned = await db.transaction(async (trx) => {
    // The backend's counts not yet reported show here too: what this statement adds is the difference.
    const scanned = async () => Number(((await trx.raw("select seq_tup_read from pg_stat_xact_user_tables where relname = 'attendance'")) as { rows: Array<{ seq_tup_read: string }> }).rows[0]!.seq_tup_read);
    const before = await scanned();
    await saveMeetings(trx, [0, 1, 2].map((n) => ({ ...meeting(80 + n, [ana.email, "gus@example.com"]), meetingId: `mtg_first_${n}` })));
    return (await scanned()) - before;
  });
  // Nothing can be kept for a meeting's first version: a scan of every attendance row would cost each batch the whole history.
  expect(rowsScanned).toBe(0);
  expect(await db("attendance").where("meeting_id", "like", "mtg_first_%").pluck("email")).toHaveLength(6);
});

describe("incremental relearning", () => {
  const eve = { userId: "usr_eve", email: "eve@example.com", name: "Eve", timezone: "Europe/Berlin", preferences: null };
  /** Eve's meetings: one a day between 08:00 and 17:00 UTC over the last 200 days and the next 20, some days two. */
  const eveMeeting = (n: number, sequence = 1, extra: Partial<{ confirmed: boolean; attendees: string[] }> = {}) => {
    const start = NOW - (200 - (n % 220)) * DAY + (8 + (n % 9)) * HOUR;
    return { meetingId: `mtg_eve_${n}`, mode: "test" as const, sequence, confirmed: true, start: new Date(start), end: new Date(start + 45 * 60_000), scheduledAt: new Date(start - (n % 9) * DAY), attendees: [eve.email], seriesId: null, ...extra };
  };
  const stored = async () => ((await db("patterns").where({ user_id: eve.userId, mode: "test" }).first()) as { patterns: unknown }).patterns;
  const wholeHistory = async (now: number) => learnPatterns(await historyOf(db, eve.email, "test", new Date(now - HISTORY_DAYS * DAY)), eve.timezone);
  const keptDay = async (day: number) => ((await db("learned_days").where({ email: eve.email, mode: "test", day }).first()) as { tally: unknown } | undefined)?.tally;

  it("counts again only the days a change touched, and learns what the whole history says", async () => {
    await savePerson(db, { ...eve, updatedAt: new Date(NOW) });
    await saveMeetings(db, Array.from({ length: 260 }, (_, n) => eveMeeting(n)));
    await relearnQueued(db, NOW);
    expect(await stored()).toEqual(await wholeHistory(NOW));
    const untouchedDay = Math.floor((NOW - 100 * DAY) / DAY);
    const untouchedBefore = await keptDay(untouchedDay);
    expect(untouchedBefore).toBeDefined();

    // A move to another day, a cancellation, one attendee leaving and a new meeting, relearned a day later.
    await saveMeetings(db, [
      { ...eveMeeting(30, 2), start: new Date(NOW - 40 * DAY + 15 * HOUR), end: new Date(NOW - 40 * DAY + 16 * HOUR) },
      eveMeeting(50, 2, { confirmed: false }),
      eveMeeting(60, 2, { attendees: ["someone@example.com"] }),
      { ...eveMeeting(300), meetingId: "mtg_eve_new" },
    ]);
    expect(await db("relearn_moments").where({ email: eve.email }).count({ n: "*" })).toEqual([{ n: 5 }]);
    // The attendance row moved with its meeting: relearning finds a day's meetings by it.
    expect(new Date((await db("attendance").where({ email: eve.email, meeting_id: "mtg_eve_30" }).first()).start_at).getTime()).toBe(NOW - 40 * DAY + 15 * HOUR);
    await db("learned_days").where({ email: eve.email, mode: "test", day: untouchedDay }).update({ tally: JSON.stringify({ marker: true }) });
    await relearnQueued(db, NOW + DAY);
    // The untouched day was not read again (its marked row stayed), yet what is learned is the whole history's.
    expect(await keptDay(untouchedDay)).toEqual({ marker: true });
    await db("learned_days").where({ email: eve.email, mode: "test", day: untouchedDay }).update({ tally: JSON.stringify(untouchedBefore) });
    expect(await stored()).toEqual(await wholeHistory(NOW + DAY));
    expect(await db("relearn_moments").where({ email: eve.email }).count({ n: "*" })).toEqual([{ n: 0 }]);

    // Weeks later the window has moved: days that left it come off.
    await saveMeetings(db, [eveMeeting(70, 2, { confirmed: false })]);
    await relearnQueued(db, NOW + 30 * DAY);
    expect(await stored()).toEqual(await wholeHistory(NOW + 30 * DAY));
    const firstKept = (await db("learned_days").where({ email: eve.email, mode: "test" }).min({ day: "day" })) as Array<{ day: number }>;
    expect(firstKept[0]!.day).toBeGreaterThanOrEqual(Math.floor((NOW + 30 * DAY - HISTORY_DAYS * DAY) / DAY));
  });

  it("learns the whole history again on a new zone, and forgets what it kept for an e-mail no account holds", async () => {
    await savePerson(db, { ...eve, timezone: "Asia/Tokyo", updatedAt: new Date(NOW + 60_000) });
    await queueRelearningEveryMode(db, eve.email);
    await relearnQueued(db, NOW + 31 * DAY);
    expect(await stored()).toEqual(learnPatterns(await historyOf(db, eve.email, "test", new Date(NOW + 31 * DAY - HISTORY_DAYS * DAY)), "Asia/Tokyo"));
    expect((await db("learned_totals").where({ email: eve.email }).first()).zone).toBe("Asia/Tokyo");

    await savePerson(db, { ...eve, timezone: "Asia/Tokyo", email: "eve.new@example.com", updatedAt: new Date(NOW + 120_000) });
    await saveMeetings(db, [eveMeeting(80, 2, { confirmed: false })]);
    await relearnQueued(db, NOW + 31 * DAY);
    expect(await db("learned_totals").where({ email: eve.email }).count({ n: "*" })).toEqual([{ n: 0 }]);
    expect(await db("learned_days").where({ email: eve.email }).count({ n: "*" })).toEqual([{ n: 0 }]);
  });
});
