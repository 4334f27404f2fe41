import { preparedName, type Knex } from "@sched/db";
import type { AttendeeResponse, Duration, GivenResponse, MeetingStatus, Mode } from "@sched/proto";
import type { OccurrenceAnswer } from "../domain/seriesAnswers.js";
import type { ExceptionRecord, SeriesRecord } from "../domain/series.js";
import { endTimeOf, LONGEST_MEETING_MS } from "../domain/timing.js";

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

async function writeParticipants(db: Knex, s: SeriesRecord): Promise<void> {
  await db("series_participants").where({ series_id: s.id }).delete();
  if (s.participants.length > 0) {
    await db("series_participants").insert(s.participants.map((email) => ({ series_id: s.id, email, mode: s.mode, last_end: iso(s.lastEnd) })));
  }
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
 * The series in a user's calendar (organized, or attended by their e-mail)
 * that may have occurrences overlapping [from, to): the last ends after
 * `from` and the first starts before `to`. Each side is an index range on
 * (mode, organizer_id | email, last_end).
 */
export function seriesInCalendarSql(q: { mode: Mode; userId: string; email: string; from?: Date | undefined; to?: Date | undefined }): { sql: string; bindings: unknown[] } {
  const from = q.from ? iso(q.from) : "-infinity";
  const to = q.to ? iso(q.to) : "infinity";
  // Each id is looked up by its primary key: a lateral join (its `limit 1` keeps Postgres from turning it into a
  // hash join, which read the whole table).
  const sql = `select s.* from (select id from meeting_series where mode = ? and organizer_id = ? and last_end > ?::timestamptz
                                union
                                select series_id from series_participants where mode = ? and email = ? and last_end > ?::timestamptz) ids
                 cross join lateral (select * from meeting_series where id = ids.id and start_time < ?::timestamptz limit 1) s`;
  return { sql, bindings: [q.mode, q.userId, from, q.mode, q.email, from, to] };
}

export async function seriesInCalendar(db: Knex, q: { mode: Mode; userId: string; email: string; from?: Date | undefined; to?: Date | undefined }): Promise<SeriesRecord[]> {
  const { sql, bindings } = seriesInCalendarSql(q);
  const { rows } = (await db.raw(sql, bindings as Knex.RawBinding[]).options({ name: preparedName("series_in_calendar", sql) })) as { rows: SeriesRow[] };
  return rows.map(toSeries);
}

/** Every series of these users (organized or attended) that may overlap [from, to), with the users it concerns. */
export async function seriesOfUsers(db: Knex, mode: Mode, users: { userId: string; email: string }[], from: Date, to: Date): Promise<SeriesRecord[]> {
  if (users.length === 0) return [];
  const sql = `select s.* from (select id from meeting_series where mode = ? and organizer_id = any(?::text[]) and last_end > ?::timestamptz
                                union
                                select series_id from series_participants where mode = ? and email = any(?::text[]) and last_end > ?::timestamptz) ids
                 cross join lateral (select * from meeting_series where id = ids.id and start_time < ?::timestamptz and status = 'confirmed' limit 1) s`;
  const { rows } = (await db.raw(sql, [mode, users.map((u) => u.userId), iso(from), mode, users.map((u) => u.email), iso(from), iso(to)])) as { rows: SeriesRow[] };
  return rows.map(toSeries);
}

/**
 * The exceptions of these series that may overlap [from, to) or replace an
 * occurrence that would: original or actual start within the window widened
 * by the longest meeting.
 */
export function exceptionsNearSql(seriesIds: string[], from: Date | undefined, to: Date | undefined): { sql: string; bindings: unknown[] } {
  const lo = from ? iso(new Date(from.getTime() - LONGEST_MEETING_MS)) : "-infinity";
  const hi = to ? iso(to) : "infinity";
  const sql = `select * from meeting_exceptions where series_id = any(?::text[])
                 and ((start_time > ?::timestamptz and start_time < ?::timestamptz) or (original_start > ?::timestamptz and original_start < ?::timestamptz))`;
  return { sql, bindings: [seriesIds, lo, hi, lo, hi] };
}

export async function exceptionsNear(db: Knex, seriesIds: string[], from: Date | undefined, to: Date | undefined): Promise<ExceptionRecord[]> {
  if (seriesIds.length === 0) return [];
  const { sql, bindings } = exceptionsNearSql(seriesIds, from, to);
  const { rows } = (await db.raw(sql, bindings as Knex.RawBinding[])) as { rows: ExceptionRow[] };
  return rows.map(toException);
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

/**
 * The own answers of the occurrences a window shows: those whose original
 * start is near the window (as exceptionsNear reads it) and those of the
 * exceptions given (moved into it from elsewhere).
 */
export async function occurrenceAnswersNear(db: Knex, seriesIds: string[], from: Date, to: Date, exceptions: readonly ExceptionRecord[]): Promise<OccurrenceAnswer[]> {
  if (seriesIds.length === 0) return [];
  const lo = iso(new Date(from.getTime() - LONGEST_MEETING_MS));
  const sql = `select * from occurrence_responses where series_id = any(?::text[])
                 and ((original_start > ?::timestamptz and original_start < ?::timestamptz) or original_start = any(?::timestamptz[]))`;
  const { rows } = (await db.raw(sql, [seriesIds, lo, iso(to), exceptions.map((e) => iso(e.originalStart))])) as { rows: OccurrenceAnswerRow[] };
  return rows.map(toOccurrenceAnswer);
}

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
