import { preparedName, type Knex } from "@sched/db";
import type { AttendeeResponse, Duration, GivenResponse, MeetingStatus, Mode } from "@sched/proto";
import { groupAnswers, type AnswersByOccurrence, type OccurrenceAnswer } from "../domain/seriesAnswers.js";
import type { ExceptionRecord, SeriesRecord } from "../domain/series.js";
import { endTimeOf } from "../domain/timing.js";

/** Recurring meetings: the series, who attends them, and their exceptions (010_recurring_series). */

interface SeriesRow {
  id: string;
  mode: Mode;
  organizer_id: string;
  organizer_email: string;
  title: string;
  description: string;
  start_time: Date;
  duration: Duration;
  participants: string[];
  status: MeetingStatus;
  sequence: number;
  created_at: Date;
  recurrence: string;
  time_zone: string;
  last_end: Date;
  active_from: Date | null;
  /** By e-mail: [response, respondedAt]; a string where the driver leaves jsonb unread. */
  responses: Record<string, [GivenResponse, string]> | string;
}

interface ExceptionRow {
  series_id: string;
  original_start: Date;
  title: string;
  description: string;
  start_time: Date;
  duration: Duration;
  participants: string[];
  status: MeetingStatus;
  sequence: number;
}

const iso = (d: Date) => d.toISOString();

function toSeries(r: SeriesRow): SeriesRecord {
  return {
    id: r.id,
    mode: r.mode,
    organizerId: r.organizer_id,
    organizerEmail: r.organizer_email,
    title: r.title,
    description: r.description,
    startTime: new Date(r.start_time),
    duration: r.duration,
    participants: r.participants,
    status: r.status,
    sequence: r.sequence,
    createdAt: new Date(r.created_at),
    recurrence: r.recurrence,
    timeZone: r.time_zone,
    lastEnd: new Date(r.last_end),
    activeFrom: r.active_from ? new Date(r.active_from) : null,
    responses: readSeriesAnswers(r.responses),
  };
}

function readSeriesAnswers(stored: SeriesRow["responses"]): SeriesRecord["responses"] {
  const byEmail = typeof stored === "string" ? (JSON.parse(stored) as Exclude<SeriesRow["responses"], string>) : stored;
  return Object.fromEntries(Object.entries(byEmail).map(([email, [response, at]]) => [email, { response, respondedAt: new Date(at) }]));
}

function seriesAnswersJson(answers: SeriesRecord["responses"]): string {
  return JSON.stringify(Object.fromEntries(Object.entries(answers).map(([email, a]) => [email, [a.response, iso(a.respondedAt)]])));
}

function toException(r: ExceptionRow): ExceptionRecord {
  return {
    seriesId: r.series_id,
    originalStart: new Date(r.original_start),
    title: r.title,
    description: r.description,
    startTime: new Date(r.start_time),
    duration: r.duration,
    participants: r.participants,
    status: r.status,
    sequence: r.sequence,
  };
}

function seriesColumns(s: SeriesRecord, now: Date) {
  return {
    title: s.title,
    description: s.description,
    start_time: iso(s.startTime),
    duration: s.duration,
    participants: s.participants,
    status: s.status,
    sequence: s.sequence,
    updated_at: iso(now),
    recurrence: s.recurrence,
    time_zone: s.timeZone,
    last_end: iso(s.lastEnd),
    active_from: s.activeFrom ? iso(s.activeFrom) : null,
    responses: seriesAnswersJson(s.responses),
  };
}

/**
 * Who the series' occurrences may concern, as rows found by e-mail: its
 * participants and those of its exceptions (someone added to one occurrence
 * only). Written after the exceptions of the same change, so it sees them.
 */
async function writeParticipants(db: Knex, s: SeriesRecord): Promise<void> {
  await db("series_participants").where({ series_id: s.id }).delete();
  await db.raw(
    `insert into series_participants (series_id, email, mode, last_end)
     select ?, email, ?, ?::timestamptz
       from (select unnest(?::text[]) as email union select unnest(participants) from meeting_exceptions where series_id = ?) concerned`,
    [s.id, s.mode, iso(s.lastEnd), s.participants, s.id],
  );
}

/** Stores a new series with its participant rows. */
export async function insertSeries(trx: Knex.Transaction, s: SeriesRecord): Promise<void> {
  await trx("meeting_series").insert({ id: s.id, mode: s.mode, organizer_id: s.organizerId, organizer_email: s.organizerEmail, created_at: iso(s.createdAt), ...seriesColumns(s, s.createdAt) });
  await writeParticipants(trx, s);
}

/** One series of a mode; with `lock`, the row stays locked until the transaction ends (its exceptions change under that lock). */
export async function findSeries(db: Knex, id: string, mode: Mode, lock = false): Promise<SeriesRecord | undefined> {
  const sql = `select * from meeting_series where id = ? and mode = ?${lock ? " for update" : ""}`;
  const { rows } = (await db.raw(sql, [id, mode])) as { rows: SeriesRow[] };
  return rows[0] ? toSeries(rows[0]) : undefined;
}

export async function updateSeries(trx: Knex.Transaction, s: SeriesRecord, now: Date): Promise<void> {
  await trx("meeting_series").where({ id: s.id }).update(seriesColumns(s, now));
  await writeParticipants(trx, s);
}

/** Removes a series; its participant rows and exceptions go with it. */
export async function deleteSeries(trx: Knex.Transaction, id: string): Promise<void> {
  await trx("meeting_series").where({ id }).delete();
}

/**
 * A series as a replica keeps it: under its version (012_series_versions),
 * with all of its exceptions and its occurrences' own answers (014_occurrence_answer_versions).
 */
export interface VersionedSeries {
  version: number;
  series: SeriesRecord;
  exceptions: ExceptionRecord[];
  /** Own answers of its occurrences, grouped for ownAnswersOf; how many rows they came from in `answerCount`. */
  answers: AnswersByOccurrence;
  answerCount: number;
}

/** Which series (id and version) may overlap a window, as the text `id:version,…`; null when none does. */
export interface SeriesVersionsQuery {
  mode: Mode;
  users: { userId: string; email: string }[];
  from?: Date | undefined;
  to?: Date | undefined;
  /** Confirmed series only (busy time). */
  confirmedOnly?: boolean;
}

/**
 * A scalar subquery giving the versions of the series these users organize
 * or whose occurrences concern them (series_participants) that may overlap
 * [from, to), as `id:version,…` or null: put beside a list's or busy time's
 * own statement, so that a user without series costs no statement more, and
 * one with series costs none more once they are kept (seriesStore.ts). Index
 * ranges on (mode, organizer_id | email, last_end), then each id by its
 * primary key (a lateral join: its `limit 1` keeps Postgres from a hash join
 * that read the whole table).
 */
export function seriesVersionsSql(q: SeriesVersionsQuery): { sql: string; bindings: unknown[] } {
  const from = q.from ? iso(q.from) : "-infinity";
  const to = q.to ? iso(q.to) : "infinity";
  const sql = `(select string_agg(s.id || ':' || s.version, ',')
                  from (select id from meeting_series where mode = ? and organizer_id = any(?::text[]) and last_end > ?::timestamptz
                        union
                        select series_id from series_participants where mode = ? and email = any(?::text[]) and last_end > ?::timestamptz) ids
                  cross join lateral (select id, version from meeting_series
                                       where id = ids.id and start_time < ?::timestamptz${q.confirmedOnly ? " and status = 'confirmed'" : ""} limit 1) s)`;
  return { sql, bindings: [q.mode, q.users.map((u) => u.userId), from, q.mode, q.users.map((u) => u.email), from, to] };
}

/** `id:version,…` read back. */
export function readSeriesVersions(text: string | null): { id: string; version: number }[] {
  if (!text) return [];
  return text.split(",").map((pair) => {
    const at = pair.lastIndexOf(":");
    return { id: pair.slice(0, at), version: Number(pair.slice(at + 1)) };
  });
}

interface ExceptionJson extends Omit<ExceptionRow, "original_start" | "start_time"> {
  original_start: string;
  start_time: string;
}

/** An occurrence's own answer as the statement below writes it: [original start, e-mail, response, responded at]. */
type OccurrenceAnswerJson = [string, string, AttendeeResponse, string | null];

const SERIES_WITH_EXCEPTIONS_SQL = `select s.*, (select coalesce(json_agg(e), '[]'::json) from meeting_exceptions e where e.series_id = s.id) as exceptions,
                                           (select coalesce(json_agg(json_build_array(r.original_start, r.email, r.response, r.responded_at)), '[]'::json)
                                              from occurrence_responses r where r.series_id = s.id) as answers
                                      from meeting_series s where s.id = any(?::text[]) and s.mode = ?`;

export function seriesWithExceptionsSql(ids: readonly string[], mode: Mode): { sql: string; bindings: unknown[] } {
  return { sql: SERIES_WITH_EXCEPTIONS_SQL, bindings: [ids, mode] };
}

/** These series (those that still exist) with all of their exceptions, their occurrences' own answers and their versions, in one statement. */
export async function seriesWithExceptions(db: Knex, ids: readonly string[], mode: Mode): Promise<VersionedSeries[]> {
  if (ids.length === 0) return [];
  const { sql, bindings } = seriesWithExceptionsSql(ids, mode);
  const { rows } = (await db
    .raw(sql, bindings as Knex.RawBinding[])
    .options({ name: preparedName("series_with_exceptions", sql) })) as {
    rows: (SeriesRow & { version: string | number; exceptions: ExceptionJson[]; answers: OccurrenceAnswerJson[] })[];
  };
  return rows.map((r) => ({
    version: Number(r.version),
    series: toSeries(r),
    exceptions: r.exceptions.map((e) => toException({ ...e, original_start: new Date(e.original_start), start_time: new Date(e.start_time) })),
    answers: groupAnswers(
      r.answers.map(([originalStart, email, response, respondedAt]) => ({ seriesId: r.id, originalStart: new Date(originalStart), email, response, respondedAt: respondedAt ? new Date(respondedAt) : null })),
    ),
    answerCount: r.answers.length,
  }));
}

/** The latest end among a series' stored exceptions, or null when it has none. */
export async function latestExceptionEnd(db: Knex, seriesId: string): Promise<Date | null> {
  const { rows } = (await db.raw(`select max(end_time) as latest from meeting_exceptions where series_id = ?`, [seriesId])) as { rows: { latest: Date | null }[] };
  return rows[0]?.latest ? new Date(rows[0].latest) : null;
}

/** Whether one of the series' exceptions lists this e-mail (someone on that occurrence alone). */
export async function listedOnAnException(db: Knex, seriesId: string, email: string): Promise<boolean> {
  const { rows } = (await db.raw(`select 1 from meeting_exceptions where series_id = ? and ? = any(participants) limit 1`, [seriesId, email.toLowerCase()])) as { rows: unknown[] };
  return rows.length > 0;
}

export async function findException(db: Knex, seriesId: string, originalStart: Date): Promise<ExceptionRecord | undefined> {
  const row = (await db("meeting_exceptions").where({ series_id: seriesId, original_start: iso(originalStart) }).first()) as ExceptionRow | undefined;
  return row ? toException(row) : undefined;
}

/**
 * The exceptions a series' event carries: every cancelled occurrence (for
 * EXDATE) and the changed ones not ended by `now` (each its own VEVENT), in
 * original-start order.
 */
export async function eventExceptions(db: Knex, seriesId: string, now: Date): Promise<ExceptionRecord[]> {
  const rows = (await db("meeting_exceptions")
    .where({ series_id: seriesId })
    .andWhere((q) => q.where({ status: "cancelled" }).orWhere("end_time", ">", iso(now)))
    .orderBy("original_start")) as ExceptionRow[];
  return rows.map(toException);
}

/** Stores exceptions, replacing any of the same occurrence. */
export async function saveExceptions(trx: Knex.Transaction, exceptions: readonly ExceptionRecord[]): Promise<void> {
  if (exceptions.length === 0) return;
  await trx("meeting_exceptions")
    .insert(
      exceptions.map((e) => ({
        series_id: e.seriesId,
        original_start: iso(e.originalStart),
        title: e.title,
        description: e.description,
        start_time: iso(e.startTime),
        end_time: iso(endTimeOf(e.startTime, e.duration)),
        duration: e.duration,
        participants: e.participants,
        status: e.status,
        sequence: e.sequence,
      })),
    )
    .onConflict(["series_id", "original_start"])
    .merge();
}

/** Original starts of the series' stored exceptions before `before`. */
export async function exceptionStartsBefore(db: Knex, seriesId: string, before: Date): Promise<Date[]> {
  const rows = (await db("meeting_exceptions").select("original_start").where({ series_id: seriesId }).andWhere("original_start", "<", iso(before))) as { original_start: Date }[];
  return rows.map((r) => new Date(r.original_start));
}

interface OccurrenceAnswerRow {
  series_id: string;
  original_start: Date;
  email: string;
  response: AttendeeResponse;
  responded_at: Date | null;
}

const toOccurrenceAnswer = (r: OccurrenceAnswerRow): OccurrenceAnswer => ({
  seriesId: r.series_id,
  originalStart: new Date(r.original_start),
  email: r.email,
  response: r.response,
  respondedAt: r.responded_at ? new Date(r.responded_at) : null,
});

/** One occurrence's own answers. */
export async function answersOfOccurrence(db: Knex, seriesId: string, originalStart: Date): Promise<OccurrenceAnswer[]> {
  const rows = (await db("occurrence_responses").where({ series_id: seriesId, original_start: iso(originalStart) })) as OccurrenceAnswerRow[];
  return rows.map(toOccurrenceAnswer);
}

/** Keeps occurrences' own answers, replacing any of the same participant and occurrence. */
export async function saveOccurrenceAnswers(trx: Knex.Transaction, answers: readonly OccurrenceAnswer[]): Promise<void> {
  if (answers.length === 0) return;
  await trx("occurrence_responses")
    .insert(answers.map((a) => ({ series_id: a.seriesId, original_start: iso(a.originalStart), email: a.email, response: a.response, responded_at: a.respondedAt ? iso(a.respondedAt) : null })))
    .onConflict(["series_id", "original_start", "email"])
    .merge();
}

/** Drops the own answers of a series' occurrences whose original start is after `after` (those not yet ended). */
export async function dropOccurrenceAnswersAfter(trx: Knex.Transaction, seriesId: string, after: Date): Promise<void> {
  await trx("occurrence_responses").where({ series_id: seriesId }).andWhere("original_start", ">", iso(after)).delete();
}

/** Removes and returns a series' exceptions that end after `after` (those not yet ended). */
export async function takeExceptionsEndingAfter(trx: Knex.Transaction, seriesId: string, after: Date): Promise<ExceptionRecord[]> {
  const rows = (await trx("meeting_exceptions").where({ series_id: seriesId }).andWhere("end_time", ">", iso(after)).delete().returning("*")) as ExceptionRow[];
  return rows.map(toException);
}

/** Keeps the answers to the whole series (on its row, locked by the caller). */
export async function saveSeriesAnswers(trx: Knex.Transaction, s: SeriesRecord): Promise<void> {
  await trx("meeting_series").where({ id: s.id }).update({ responses: seriesAnswersJson(s.responses) });
}
