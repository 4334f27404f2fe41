import { preparedName, type Knex } from "@sched/db";
import type { Mode, Preferences } from "@sched/proto";
import type { Interval } from "../domain/fit.js";
import type { Learned, Relearned, StartRange } from "../domain/learning.js";
import type { DaySpan, HistoryMeeting, Patterns } from "../domain/patterns.js";
import type { Tally } from "../domain/tally.js";

export interface KnownPerson {
  userId: string;
  email: string;
  name: string;
  timezone: string;
  /** Null until an account event carrying preferences arrives. */
  preferences: Preferences | null;
}

interface PersonRow {
  user_id: string;
  email: string;
  name: string;
  timezone: string;
  preferences: Preferences | string | null;
}

const PERSON_COLUMNS = ["user_id", "email", "name", "timezone", "preferences"];

const asJson = <T>(value: T | string): T => (typeof value === "string" ? (JSON.parse(value) as T) : value);
const asMs = (value: Date | string): number => (value instanceof Date ? value.getTime() : Date.parse(value));

function toPerson(row: PersonRow): KnownPerson {
  return { userId: row.user_id, email: row.email, name: row.name, timezone: row.timezone, preferences: row.preferences === null ? null : asJson(row.preferences) };
}

/**
 * Keeps the newer of the stored and the given account. `stored`: this
 * version was kept. `relearn`: what the person's patterns are learned from
 * moved, i.e. the account is new, or its e-mail (which meetings are theirs)
 * or zone (their local hours) changed; a new name or new preferences leave
 * the patterns as they are.
 */
export async function savePerson(db: Knex, person: KnownPerson & { updatedAt: Date }): Promise<{ stored: boolean; relearn: boolean }> {
  const { rows } = (await db.raw(
    `with earlier as (select email, timezone from people where user_id = ?),
     stored as (
       insert into people (user_id, email, name, timezone, preferences, updated_at) values (?, ?, ?, ?, ?::jsonb, ?)
       on conflict (user_id) do update set email = excluded.email, name = excluded.name, timezone = excluded.timezone,
         preferences = coalesce(excluded.preferences, people.preferences), updated_at = excluded.updated_at
       where people.updated_at <= excluded.updated_at
       returning email, timezone
     )
     select exists (select 1 from stored) as stored,
            exists (select 1 from stored where not exists (select 1 from earlier e where e.email = stored.email and e.timezone = stored.timezone)) as relearn`,
    [person.userId, person.userId, person.email, person.name, person.timezone, person.preferences === null ? null : JSON.stringify(person.preferences), person.updatedAt],
  )) as { rows: Array<{ stored: boolean; relearn: boolean }> };
  return rows[0]!;
}

export async function peopleByIds(db: Knex, ids: readonly string[]): Promise<KnownPerson[]> {
  if (ids.length === 0) return [];
  return ((await db("people").whereIn("user_id", ids).select(PERSON_COLUMNS)) as PersonRow[]).map(toPerson);
}

export async function peopleByEmails(db: Knex, emails: readonly string[]): Promise<KnownPerson[]> {
  if (emails.length === 0) return [];
  return ((await db("people").whereIn("email", emails).select(PERSON_COLUMNS)) as PersonRow[]).map(toPerson);
}

export interface StoredMeeting {
  meetingId: string;
  mode: Mode;
  sequence: number;
  confirmed: boolean;
  start: Date;
  end: Date;
  scheduledAt: Date;
  /** Organizer and participants, lower-cased. */
  attendees: readonly string[];
  /** The series an occurrence belongs to; null for a single meeting. */
  seriesId: string | null;
}

/**
 * Stores meeting versions, each unless a later one (by sequence) is already
 * kept, and queues everyone whose history changed for relearning: who
 * attends now and who no longer does, each with the meeting's old and new
 * start (relearning counts again the days holding them). A repeated or older
 * version changes nothing. Returns the people queued.
 *
 * One statement for the whole batch, so one round trip: every later step
 * runs only for the meetings `stored` returned, i.e. whose version was newer.
 * Only the newest version of a meeting goes in (one statement cannot write a
 * row twice). Attendees who stay keep their rows (removing and re-adding one
 * key in one statement would collide), their start moved with the meeting's. The tables are written in the order
 * startNewGeneration locks them.
 */
export async function saveMeetings(db: Knex, meetings: readonly StoredMeeting[]): Promise<string[]> {
  const newest = new Map<string, StoredMeeting>();
  for (const m of meetings) if ((newest.get(m.meetingId)?.sequence ?? -1) < m.sequence) newest.set(m.meetingId, m);
  if (newest.size === 0) return [];
  const given = [...newest.values()].map((m) => ({
    meeting_id: m.meetingId,
    mode: m.mode,
    sequence: m.sequence,
    confirmed: m.confirmed,
    start_at: m.start.toISOString(),
    end_at: m.end.toISOString(),
    scheduled_at: m.scheduledAt.toISOString(),
    attendees: m.attendees,
    series_id: m.seriesId,
  }));
  const sql = `with given as (
       select * from jsonb_to_recordset(?::jsonb) as g(meeting_id text, mode text, sequence integer, confirmed boolean,
         start_at timestamptz, end_at timestamptz, scheduled_at timestamptz, attendees text[], series_id text)
     ),
     before as (
       select m.meeting_id, m.start_at from meetings m join given g on g.meeting_id = m.meeting_id
     ),
     stored as (
       insert into meetings (meeting_id, mode, sequence, confirmed, start_at, end_at, scheduled_at, series_id)
       select meeting_id, mode, sequence, confirmed, start_at, end_at, scheduled_at, series_id from given
       on conflict (meeting_id) do update set sequence = excluded.sequence, confirmed = excluded.confirmed,
         start_at = excluded.start_at, end_at = excluded.end_at, series_id = excluded.series_id
       where meetings.sequence < excluded.sequence
       returning meeting_id
     ),
     kept as (
       select g.meeting_id, g.mode, g.attendees, g.start_at from given g join stored s on s.meeting_id = g.meeting_id
     ),
     gone as (
       delete from attendance a using kept k where a.meeting_id = k.meeting_id and a.email <> all(k.attendees) returning a.email, a.mode, a.meeting_id
     ),
     came as (
       insert into attendance (email, mode, meeting_id, start_at) select e, k.mode, k.meeting_id, k.start_at from kept k, unnest(k.attendees) as e
       on conflict (email, mode, meeting_id) do update set start_at = excluded.start_at where attendance.start_at <> excluded.start_at
     ),
     touching as (
       select email, mode, meeting_id from gone union select e, k.mode, k.meeting_id from kept k, unnest(k.attendees) as e
     ),
     touched as (
       select distinct email, mode from touching
     ),
     queued as (
       insert into relearn_queue (email, mode) select email, mode from touched on conflict do nothing
     ),
     moments as (
       insert into relearn_moments (email, mode, start_at)
       select t.email, t.mode, s.start_at from touching t
       join (select meeting_id, start_at from given union select meeting_id, start_at from before) s on s.meeting_id = t.meeting_id
       on conflict do nothing
     )
     select email from touched`;
  const { rows } = (await db.raw(sql, [JSON.stringify(given)]).options({ name: preparedName("save_meetings", sql) })) as { rows: Array<{ email: string }> };
  return rows.map((r) => r.email);
}

/** The occurrence ids stored for each of these series. */
export async function occurrenceIdsOf(db: Knex, seriesIds: readonly string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (seriesIds.length === 0) return out;
  const rows = (await db("meetings").whereIn("series_id", [...new Set(seriesIds)]).select("series_id", "meeting_id")) as Array<{ series_id: string; meeting_id: string }>;
  for (const r of rows) out.set(r.series_id, [...(out.get(r.series_id) ?? []), r.meeting_id]);
  return out;
}

/**
 * Marks a person's patterns stale in every mode they have meetings in, in one
 * statement; one already queued stays queued once. No start is touched: a new
 * zone makes relearning start over, and a new account or e-mail learns what
 * is kept for the e-mail.
 */
export async function queueRelearningEveryMode(db: Knex, email: string): Promise<void> {
  await db.raw("insert into relearn_queue (email, mode) select distinct email, mode from attendance where email = ? on conflict do nothing", [email]);
}

/**
 * Takes up to `limit` queued people, oldest first, for the transaction's
 * lifetime: another replica skips them, and should the transaction fail
 * they are queued again.
 */
export async function takeRelearning(trx: Knex.Transaction, limit: number): Promise<Array<{ email: string; mode: Mode }>> {
  const { rows } = (await trx.raw(
    `delete from relearn_queue where (email, mode) in (
       select email, mode from relearn_queue order by queued_at limit ? for update skip locked)
     returning email, mode`,
    [limit],
  )) as { rows: Array<{ email: string; mode: Mode }> };
  return rows;
}

/** One person's confirmed meetings starting at or after `since`, for learning. */
export async function historyOf(db: Knex, email: string, mode: Mode, since: Date): Promise<HistoryMeeting[]> {
  const rows = (await db("attendance as a")
    .join("meetings as m", "m.meeting_id", "a.meeting_id")
    .where({ "a.email": email, "a.mode": mode, "m.confirmed": true })
    .where("m.start_at", ">=", since)
    .select("m.start_at", "m.end_at", "m.scheduled_at")) as Array<{ start_at: Date | string; end_at: Date | string; scheduled_at: Date | string }>;
  return rows.map((r) => ({
    start: asMs(r.start_at),
    durationMinutes: Math.round((asMs(r.end_at) - asMs(r.start_at)) / 60_000),
    scheduledAt: asMs(r.scheduled_at),
  }));
}

export async function savePatterns(db: Knex, userId: string, mode: Mode, patterns: Patterns): Promise<void> {
  await db("patterns")
    .insert({ user_id: userId, mode, patterns: JSON.stringify(patterns), learned_at: db.raw("clock_timestamp()") })
    .onConflict(["user_id", "mode"])
    .merge();
}

export async function patternsOf(db: Knex, userIds: readonly string[], mode: Mode): Promise<Map<string, Patterns>> {
  if (userIds.length === 0) return new Map();
  const rows = (await db("patterns").where({ mode }).whereIn("user_id", userIds).select("user_id", "patterns")) as Array<{ user_id: string; patterns: Patterns | string }>;
  return new Map(
    rows.map((r) => {
      // Patterns learned before clustering and avoided days were read carry neither: they read as unknown.
      const stored = asJson(r.patterns) as Omit<Patterns, "clustering" | "avoidedWeekdays"> & Partial<Pick<Patterns, "clustering" | "avoidedWeekdays">>;
      return [r.user_id, { ...stored, clustering: stored.clustering ?? null, avoidedWeekdays: stored.avoidedWeekdays ?? [] }];
    }),
  );
}

/** Confirmed meetings of each e-mail overlapping [from, to), in one query. */
/** The confirmed meetings of known people (by user id, through their account's e-mail) that overlap [from, to). */
export async function meetingsAround(db: Knex, userIds: readonly string[], mode: Mode, from: Date, to: Date): Promise<Map<string, Interval[]>> {
  const byUser = new Map<string, Interval[]>();
  if (userIds.length === 0) return byUser;
  const rows = (await db("people as p")
    .join("attendance as a", "a.email", "p.email")
    .join("meetings as m", "m.meeting_id", "a.meeting_id")
    .whereIn("p.user_id", userIds)
    .where({ "a.mode": mode, "m.confirmed": true })
    .where("m.start_at", "<", to)
    .where("m.end_at", ">", from)
    .select("p.user_id", "m.start_at", "m.end_at")) as Array<{ user_id: string; start_at: Date | string; end_at: Date | string }>;
  for (const r of rows) {
    const intervals = byUser.get(r.user_id) ?? [];
    intervals.push({ start: asMs(r.start_at), end: asMs(r.end_at) });
    byUser.set(r.user_id, intervals);
  }
  return byUser;
}

export async function historyGeneration(db: Knex): Promise<number> {
  const row = (await db("history_state").where({ id: 1 }).first("generation")) as { generation: number };
  return row.generation;
}

/**
 * Forgets everything learned and starts a new consumer generation, whose
 * durable consumer reads the streams again from their first event.
 */
export async function startNewGeneration(db: Knex): Promise<number> {
  // Running replicas keep writing while this empties the tables; taking every
  // lock first makes their writes wait. The tables are locked in the order
  // replicas write them (saveMeetings: meetings, attendance, relearn_queue,
  // relearn_moments; relearning: relearn_queue, relearn_moments, learned_days,
  // learned_totals, patterns), so a replica midway through a
  // change finishes it instead of deadlocking with this.
  return db.transaction(async (trx) => {
    await trx.raw("lock table history_state, meetings, attendance, relearn_queue, relearn_moments, learned_days, learned_totals, patterns, people in exclusive mode");
    for (const table of ["patterns", "learned_totals", "learned_days", "relearn_moments", "relearn_queue", "attendance", "meetings", "people"]) await trx(table).delete();
    const [row] = (await trx("history_state").where({ id: 1 }).increment("generation", 1).returning("generation")) as Array<{ generation: number }>;
    return row!.generation;
  });
}

// ---- what relearning keeps between runs ----------------------------------------------

// What relearning keeps between runs (migration 004, domain/learning.ts). Arrays go in as JSON, which Postgres and PGlite read alike.

export interface Queued {
  email: string;
  mode: Mode;
}

const keyOf = (q: Queued): string => `${q.mode} ${q.email}`;

/** Takes the starts touched for these people since their last relearning, by `mode e-mail`. */
export async function takeTouchedStarts(trx: Knex.Transaction, people: readonly Queued[]): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>();
  if (people.length === 0) return out;
  const { rows } = (await trx.raw(
    `delete from relearn_moments r using jsonb_to_recordset(?::jsonb) as q(email text, mode text)
     where r.email = q.email and r.mode = q.mode returning r.email, r.mode, r.start_at`,
    [JSON.stringify(people)],
  )) as { rows: Array<{ email: string; mode: Mode; start_at: Date | string }> };
  for (const r of rows) out.set(keyOf(r), [...(out.get(keyOf(r)) ?? []), asMs(r.start_at)]);
  return out;
}

/** What is kept of these people's learning, by `mode e-mail`. */
export async function learnedOf(trx: Knex.Transaction, people: readonly Queued[]): Promise<Map<string, Learned>> {
  if (people.length === 0) return new Map();
  const { rows } = (await trx.raw(
    `select l.email, l.mode, l.zone, l.first_full_day, l.totals from learned_totals l
     join jsonb_to_recordset(?::jsonb) as q(email text, mode text) on l.email = q.email and l.mode = q.mode`,
    [JSON.stringify(people)],
  )) as { rows: Array<{ email: string; mode: Mode; zone: string; first_full_day: number; totals: Tally | string }> };
  return new Map(rows.map((r) => [keyOf(r), { zone: r.zone, firstFullDay: r.first_full_day, totals: asJson(r.totals) }]));
}

/** The kept tallies of these days and of every kept day before `before`. */
export async function keptDaysOf(trx: Knex.Transaction, person: Queued, before: number, days: readonly number[]): Promise<Map<number, Tally>> {
  const { rows } = (await trx.raw(
    `select day, tally from learned_days where email = ? and mode = ?
     and (day < ? or day in (select value::integer from jsonb_array_elements_text(?::jsonb)))`,
    [person.email, person.mode, before, JSON.stringify(days)],
  )) as { rows: Array<{ day: number; tally: Tally | string }> };
  return new Map(rows.map((r) => [r.day, asJson(r.tally)]));
}

/** A person's confirmed meetings starting at or after `since` within any of the ranges (which do not overlap), read by the attendance start index. */
export async function meetingsStartingIn(trx: Knex.Transaction, person: Queued, since: number, ranges: readonly StartRange[]): Promise<HistoryMeeting[]> {
  const { rows } = (await trx.raw(
    `select m.start_at, m.end_at, m.scheduled_at
     from jsonb_to_recordset(?::jsonb) as r("from" double precision, "to" double precision)
     join attendance a on a.email = ? and a.mode = ? and a.start_at >= greatest(?::timestamptz, to_timestamp(r."from" / 1000)) and a.start_at < to_timestamp(r."to" / 1000)
     join meetings m on m.meeting_id = a.meeting_id
     where m.confirmed`,
    [JSON.stringify(ranges), person.email, person.mode, new Date(since)],
  )) as { rows: Array<{ start_at: Date | string; end_at: Date | string; scheduled_at: Date | string }> };
  return rows.map((r) => ({
    start: asMs(r.start_at),
    durationMinutes: Math.round((asMs(r.end_at) - asMs(r.start_at)) / 60_000),
    scheduledAt: asMs(r.scheduled_at),
  }));
}

/**
 * Writes a relearning's kept days and totals; `replaceAll` (a full
 * relearning) first deletes every kept day. Returns the first and last kept
 * day after the writes, read in the same statement (which sees the rows as
 * they were before it, so the written days are added and the removed ones left out).
 */
export async function keepLearning(trx: Knex.Transaction, person: Queued, relearned: Relearned, replaceAll: boolean): Promise<DaySpan | null> {
  if (replaceAll) await trx.raw("delete from learned_days where email = ? and mode = ?", [person.email, person.mode]);
  const written = [...relearned.write].map(([day, tally]) => ({ day, tally }));
  const { learned } = relearned;
  const { rows } = (await trx.raw(
    `with written as (select * from jsonb_to_recordset(?::jsonb) as w(day integer, tally jsonb)),
     removed as (select value::integer as day from jsonb_array_elements_text(?::jsonb)),
     deleted as (delete from learned_days where email = ? and mode = ? and day in (select day from removed)),
     upserted as (
       insert into learned_days (email, mode, day, tally) select ?, ?, day, tally from written
       on conflict (email, mode, day) do update set tally = excluded.tally
     ),
     totals as (
       insert into learned_totals (email, mode, zone, first_full_day, totals) values (?, ?, ?, ?, ?::jsonb)
       on conflict (email, mode) do update set zone = excluded.zone, first_full_day = excluded.first_full_day, totals = excluded.totals
     ),
     days as (
       select day from learned_days where email = ? and mode = ? and day >= ? and day not in (select day from removed)
       union all select day from written
     )
     select min(day) as first, max(day) as last from days`,
    [
      JSON.stringify(written),
      JSON.stringify(relearned.remove),
      person.email,
      person.mode,
      person.email,
      person.mode,
      person.email,
      person.mode,
      learned.zone,
      learned.firstFullDay,
      JSON.stringify(learned.totals),
      person.email,
      person.mode,
      learned.firstFullDay,
    ],
  )) as { rows: Array<{ first: number | null; last: number | null }> };
  const span = rows[0]!;
  return span.first === null || span.last === null ? null : { first: span.first, last: span.last };
}

/**
 * Forgets what is kept for these people (e-mails of no known account): their
 * changes are not followed, so an account that takes the e-mail later learns
 * it whole.
 */
export async function forgetLearning(trx: Knex.Transaction, people: readonly Queued[]): Promise<void> {
  if (people.length === 0) return;
  await trx.raw(
    `with q as (select * from jsonb_to_recordset(?::jsonb) as q(email text, mode text)),
     days as (delete from learned_days t using q where t.email = q.email and t.mode = q.mode)
     delete from learned_totals t using q where t.email = q.email and t.mode = q.mode`,
    [JSON.stringify(people)],
  );
}
