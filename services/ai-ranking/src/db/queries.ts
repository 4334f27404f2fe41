import { namedStatement, runNamed, type Knex } from "@sched/db";
import type { Mode, Preferences } from "@sched/proto";
import type { Interval } from "../domain/fit.js";
import type { Learned, Relearned, RelearningPlan } from "../domain/learning.js";
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

/** saveMeetings's statement, named once: sent by name straight to a pooled connection (runNamed), without knex building it on every batch. */
const SAVE_MEETINGS = namedStatement(
  "save_meetings",
  `with given as (
     select * from jsonb_to_recordset(?::jsonb) as g(meeting_id text, mode text, sequence integer, confirmed boolean,
       start_at timestamptz, end_at timestamptz, scheduled_at timestamptz, attendees text[], series_id text)
   ),
   before as (
     select m.meeting_id, m.start_at from meetings m
     where exists (select from given where sequence > 1) and m.meeting_id = any (array(select meeting_id from given where sequence > 1))
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
     delete from attendance a using kept k
     where exists (select from before) and a.meeting_id = any (array(select meeting_id from before))
       and a.meeting_id = k.meeting_id and a.email <> all(k.attendees)
     returning a.email, a.mode, a.meeting_id
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
   select email from touched`,
);

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
 *
 * Only a meeting's later version (sequence above 1) can find it stored
 * already, so the earlier version and attendance are read for those alone,
 * by their keys, and not at all when there are none (a batch of creates).
 * Joined to the batch instead, they were read by a scan of both tables
 * whenever the plan was made on small tables (a fresh schema, or one not
 * analyzed yet; the statement's plan is kept for the connection's life):
 * every batch then cost as much as the history kept.
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
  const rows = await runNamed<{ email: string }>(db, SAVE_MEETINGS, [JSON.stringify(given)]);
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

// What relearning keeps between runs (migration 004, domain/learning.ts). A run
// is three statements whatever the number of people it takes (takeRelearning,
// readForRelearning, writeRelearning), each sent by name, so parsed and planned
// once per connection. Arrays go in as JSON, which Postgres and PGlite read alike;
// instants come back as milliseconds (float8), not as dates to parse.

interface Queued {
  email: string;
  mode: Mode;
}

/** A queued person as relearning takes them: their account (none: an e-mail no account holds), what is kept and the starts touched since. */
export interface TakenForRelearning extends Queued {
  /** The account holding the e-mail; null when none does (what was kept for it is forgotten by the same statement). */
  person: { userId: string; timezone: string } | null;
  kept: Learned | null;
  touched: number[];
}

/** An instant as milliseconds since the epoch; rounding is exact, as every stored instant came from a JavaScript date. */
const msOf = (column: string): string => `round(extract(epoch from ${column}) * 1000)::float8`;

const TAKE_RELEARNING = namedStatement(
  "ai_take_relearning",
  `with taken as (
     delete from relearn_queue where (email, mode) in (
       select email, mode from relearn_queue order by queued_at limit ? for update skip locked)
     returning email, mode
   ),
   touched as (
     delete from relearn_moments r using taken t where r.email = t.email and r.mode = t.mode returning r.email, r.mode, r.start_at
   ),
   owned as (
     select t.email, t.mode, p.user_id, p.timezone from taken t
     left join lateral (select user_id, timezone from people where email = t.email order by updated_at desc limit 1) p on true
   ),
   forgot_days as (
     delete from learned_days d using owned o where o.user_id is null and d.email = o.email and d.mode = o.mode
   ),
   forgot_totals as (
     delete from learned_totals l using owned o where o.user_id is null and l.email = o.email and l.mode = o.mode
   )
   select o.email, o.mode, o.user_id, o.timezone, l.zone, l.first_full_day, l.totals,
          (select json_agg(${msOf("t.start_at")}) from touched t where t.email = o.email and t.mode = o.mode) as touched
     from owned o left join learned_totals l on o.user_id is not null and l.email = o.email and l.mode = o.mode`,
);

/**
 * Takes up to `limit` queued people, oldest first, for the transaction's
 * lifetime (another replica skips them, and should the transaction fail
 * they are queued again), in one statement with the starts touched since
 * their last relearning (taken too), their account and what is kept for
 * them; for a queued e-mail no account holds, what was kept is forgotten:
 * its changes are not followed, so an account that takes the e-mail later
 * learns it whole.
 */
export async function takeRelearning(trx: Knex.Transaction, limit: number): Promise<TakenForRelearning[]> {
  const rows = await runNamed<{
    email: string;
    mode: Mode;
    user_id: string | null;
    timezone: string | null;
    zone: string | null;
    first_full_day: number | null;
    totals: Tally | string | null;
    touched: number[] | string | null;
  }>(trx, TAKE_RELEARNING, [limit]);
  return rows.map((r) => ({
    email: r.email,
    mode: r.mode,
    person: r.user_id === null ? null : { userId: r.user_id, timezone: r.timezone! },
    kept: r.zone === null || r.totals === null ? null : { zone: r.zone, firstFullDay: r.first_full_day!, totals: asJson(r.totals) },
    touched: r.touched === null ? [] : asJson(r.touched),
  }));
}

/** What relearning reads of one person: all meetings in the window (`full`), or the kept days and meetings its plan names. */
export interface RelearningRead extends Queued {
  plan: RelearningPlan;
}

/** What was read for one person, as the plan asked. */
export interface ReadForRelearning {
  /** The kept tallies of the days to recount and of every kept day before the window's first full day (none for a full relearning). */
  keptDays: Map<number, Tally>;
  /** The first and last kept day from the window's first full day on that the plan neither recounts nor removes (null for a full relearning). */
  untouched: DaySpan | null;
  meetings: HistoryMeeting[];
}

const READ_FOR_RELEARNING = namedStatement(
  "ai_read_relearning",
  `select q.i,
     (select json_agg(json_build_array(d.day, d.tally)) from learned_days d
       where not q."full" and d.email = q.email and d.mode = q.mode
         and (d.day < q.first_full_day or d.day in (select value::integer from jsonb_array_elements_text(q.days)))) as kept_days,
     (select json_build_array(min(d.day), max(d.day)) from learned_days d
       where not q."full" and d.email = q.email and d.mode = q.mode
         and d.day >= q.first_full_day and d.day not in (select value::integer from jsonb_array_elements_text(q.days))) as untouched,
     (select json_agg(json_build_array(${msOf("m.start_at")}, ${msOf("m.end_at")}, ${msOf("m.scheduled_at")}))
        from jsonb_to_recordset(q.ranges) as r("from" double precision, "to" double precision)
        -- Each range read on its own through the start index, both ends bounding the scan: the fence (offset 0) keeps the
        -- ranges driving, the order picks attendance_by_start over the primary key. Without them a planner with no
        -- statistics (an embedded database is never analyzed) read all the person's attendance and tried every range
        -- against every row: the whole history at every relearning, its cost growing with it.
        cross join lateral (
          select a.meeting_id from attendance a
          where a.email = q.email and a.mode = q.mode
            and a.start_at >= to_timestamp(greatest(q.since, r."from") / 1000)
            and a.start_at < coalesce(to_timestamp(r."to" / 1000), 'infinity')
          order by a.start_at
          offset 0
        ) a
        join meetings m on m.meeting_id = a.meeting_id
       where m.confirmed) as meetings
   from jsonb_to_recordset(?::jsonb) as q(i integer, email text, mode text, "full" boolean, since double precision, first_full_day integer, days jsonb, ranges jsonb)`,
);

/**
 * Reads, in one statement for everyone, what each plan needs: for a full
 * relearning every confirmed meeting starting in the window; otherwise the
 * kept tallies it takes off or recounts, the span of the kept days it
 * leaves, and the meetings starting in its ranges (by the attendance start
 * index, so the person's history is not read).
 */
export async function readForRelearning(trx: Knex.Transaction, reads: readonly RelearningRead[]): Promise<ReadForRelearning[]> {
  if (reads.length === 0) return [];
  const given = reads.map(({ email, mode, plan }, i) => ({
    i,
    email,
    mode,
    full: plan.full,
    since: plan.since,
    first_full_day: plan.firstFullDay,
    days: plan.full ? [] : plan.daysToRecount,
    ranges: plan.full ? [{ from: plan.since, to: null }] : plan.ranges,
  }));
  const rows = await runNamed<{
    i: number;
    kept_days: Array<[number, Tally]> | string | null;
    untouched: [number | null, number | null] | string | null;
    meetings: Array<[number, number, number]> | string | null;
  }>(trx, READ_FOR_RELEARNING, [JSON.stringify(given)]);
  const out: ReadForRelearning[] = reads.map(() => ({ keptDays: new Map(), untouched: null, meetings: [] }));
  for (const r of rows) {
    const read = out[r.i]!;
    read.keptDays = new Map(r.kept_days === null ? [] : asJson(r.kept_days));
    const [first, last] = r.untouched === null ? [null, null] : asJson(r.untouched);
    read.untouched = first === null || last === null ? null : { first, last };
    read.meetings = (r.meetings === null ? [] : asJson(r.meetings)).map(([start, end, scheduledAt]) => ({
      start,
      durationMinutes: Math.round((end - start) / 60_000),
      scheduledAt,
    }));
  }
  return out;
}

/** One person's relearning to write: what is kept, and the patterns learned. */
export interface RelearningWrite extends Queued {
  userId: string;
  relearned: Relearned;
  /** A full relearning: every kept day not written is deleted. */
  full: boolean;
  patterns: Patterns;
}

const WRITE_RELEARNING = namedStatement(
  "ai_write_relearning",
  `with p as (
     select * from jsonb_to_recordset(?::jsonb) as p(email text, mode text, user_id text, "full" boolean, zone text, first_full_day integer, totals jsonb, patterns jsonb)
   ),
   w as (select * from jsonb_to_recordset(?::jsonb) as w(email text, mode text, day integer, tally jsonb)),
   r as (select * from jsonb_to_recordset(?::jsonb) as r(email text, mode text, day integer)),
   deleted as (
     delete from learned_days d using p where d.email = p.email and d.mode = p.mode
       and (exists (select 1 from r where r.email = d.email and r.mode = d.mode and r.day = d.day)
         or (p."full" and not exists (select 1 from w where w.email = d.email and w.mode = d.mode and w.day = d.day)))
   ),
   upserted as (
     insert into learned_days (email, mode, day, tally) select email, mode, day, tally from w
     on conflict (email, mode, day) do update set tally = excluded.tally
   ),
   totals as (
     insert into learned_totals (email, mode, zone, first_full_day, totals) select email, mode, zone, first_full_day, totals from p
     on conflict (email, mode) do update set zone = excluded.zone, first_full_day = excluded.first_full_day, totals = excluded.totals
   )
   insert into patterns (user_id, mode, patterns, learned_at) select user_id, mode, patterns, clock_timestamp() from p
   on conflict (user_id, mode) do update set patterns = excluded.patterns, learned_at = excluded.learned_at`,
);

/**
 * Writes everyone's relearning in one statement: the kept days (a day is
 * either written or deleted, never both, so the statement's parts touch
 * different rows), the totals and the patterns.
 */
export async function writeRelearning(trx: Knex.Transaction, writes: readonly RelearningWrite[]): Promise<void> {
  if (writes.length === 0) return;
  const people = writes.map(({ email, mode, userId, full, relearned, patterns }) => ({
    email,
    mode,
    user_id: userId,
    full,
    zone: relearned.learned.zone,
    first_full_day: relearned.learned.firstFullDay,
    totals: relearned.learned.totals,
    patterns,
  }));
  const written = writes.flatMap(({ email, mode, relearned }) => [...relearned.write].map(([day, tally]) => ({ email, mode, day, tally })));
  const removed = writes.flatMap(({ email, mode, relearned }) => relearned.remove.map((day) => ({ email, mode, day })));
  await runNamed(trx, WRITE_RELEARNING, [JSON.stringify(people), JSON.stringify(written), JSON.stringify(removed)]);
}
