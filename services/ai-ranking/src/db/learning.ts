import type { Knex } from "@sched/db";
import type { Mode } from "@sched/proto";
import type { Learned, Relearned, StartRange } from "../domain/learning.js";
import type { DaySpan, HistoryMeeting } from "../domain/patterns.js";
import type { Tally } from "../domain/tally.js";

// What relearning keeps between runs (migration 004, domain/learning.ts). Arrays go in as JSON, which Postgres and PGlite read alike.

export interface Queued {
  email: string;
  mode: Mode;
}

const keyOf = (q: Queued): string => `${q.mode} ${q.email}`;
const asJson = <T>(value: T | string): T => (typeof value === "string" ? (JSON.parse(value) as T) : value);
const asMs = (value: Date | string): number => (value instanceof Date ? value.getTime() : Date.parse(value));

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
