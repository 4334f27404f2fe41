import { namedStatement, preparedName, runNamed, type Knex, type NamedStatement } from "@sched/db";
import { outboxInsertFrom, outboxRowJson, type OutboxInsert } from "@sched/outbox";
import { MAX_MEETINGS_PAGE, type AttendeeResponse, type Duration, type GivenResponse, type MeetingStatus, type Mode } from "@sched/proto";
import type { ListPlan } from "../domain/filters.js";
import { itemsOfListAnswer, LIST_ANSWER } from "../domain/listAnswer.js";
import type { GivenAnswer, MeetingRecord } from "../domain/meeting.js";
import type { ExceptionRecord, SeriesRecord } from "../domain/series.js";
import { attendeesOf, groupAnswers, type AnswersByOccurrence, type OccurrenceAnswer } from "../domain/seriesAnswers.js";
import type { TimeOffRecord } from "../domain/timeOff.js";
import { endTimeOf, LONGEST_MEETING_MS } from "../domain/timing.js";

/** What a meeting, a series and one changed occurrence of it each hold: the columns they share. */
interface ContentColumns {
  title: string;
  description: string;
  start_time: Date;
  duration: Duration;
  participants: string[];
  status: MeetingStatus;
  sequence: number;
}

/** The columns a meeting and a series share (meetings, meeting_series). */
interface MeetingColumns extends ContentColumns {
  id: string;
  mode: Mode;
  organizer_id: string;
  organizer_email: string;
  created_at: Date;
}

interface MeetingRow extends MeetingColumns {
  /** [email, response, responded_at] of each participant who answered. */
  responses: [string, GivenAnswer["response"], string][];
}

const MEETING_COLUMNS = "id, mode, organizer_id, organizer_email, title, description, start_time, duration, participants, status, sequence, created_at";
/** The answers given, read with the meeting: its participant rows are beside it in their primary key. */
const RESPONSES_COLUMN = `(select coalesce(json_agg(json_build_array(p.email, p.response, p.responded_at)), '[]'::json)
     from meeting_participants p where p.meeting_id = meetings.id and p.response <> 'needsAction') as responses`;

const iso = (d: Date) => d.toISOString();

function contentOf(row: ContentColumns) {
  return {
    title: row.title,
    description: row.description,
    startTime: new Date(row.start_time),
    duration: row.duration,
    participants: row.participants,
    status: row.status,
    sequence: row.sequence,
  };
}

function meetingFieldsOf(row: MeetingColumns) {
  return { id: row.id, mode: row.mode, organizerId: row.organizer_id, organizerEmail: row.organizer_email, ...contentOf(row), createdAt: new Date(row.created_at) };
}

function answersOf(responses: MeetingRow["responses"]): MeetingRecord["responses"] {
  return Object.fromEntries(responses.map(([email, response, at]) => [email, { response, respondedAt: new Date(at) }]));
}

function toRecord(row: MeetingRow): MeetingRecord {
  return { ...meetingFieldsOf(row), responses: answersOf(row.responses) };
}

// ---- meetings ----------------------------------------------------------------

function participantRows(m: MeetingRecord) {
  const end = iso(endTimeOf(m.startTime, m.duration));
  return m.participants.map((email) => {
    const answer = m.responses[email];
    return {
      ...{ meeting_id: m.id, email, mode: m.mode, status: m.status, start_time: iso(m.startTime), end_time: end },
      ...{ response: answer?.response ?? "needsAction", responded_at: answer ? iso(answer.respondedAt) : null },
    };
  });
}

/** A meeting to insert with its `meeting.created` event's outbox row. */
export interface NewMeetingRow {
  meeting: MeetingRecord;
  event: OutboxInsert;
}

const INSERT_MEETINGS = namedStatement(
  "insert_meetings",
  `with given as (
     select * from jsonb_to_recordset(?::jsonb) as g(ord int, id text, mode text, organizer_id text, organizer_email text, title text, description text,
       start_time timestamptz, end_time timestamptz, duration text, participants text[], status text, sequence int, created_at timestamptz,
       subject text, payload jsonb, msg_id text, trace_context jsonb)
   ),
   meeting as (
     insert into meetings (id, mode, organizer_id, organizer_email, title, description, start_time, end_time, duration,
                           participants, status, sequence, created_at, updated_at)
     select id, mode, organizer_id, organizer_email, title, description, start_time, end_time, duration, participants, status, sequence, created_at, created_at
     from given
   ),
   participant as (
     insert into meeting_participants (meeting_id, email, mode, status, start_time, end_time)
     select g.id, p.email, g.mode, g.status, g.start_time, g.end_time from given g cross join lateral unnest(g.participants) as p(email)
   ),
   event as (${outboxInsertFrom("given")})
   select 1`,
);

/**
 * New meetings, their participant rows and the outbox rows of their events
 * (outboxInsert) as ONE statement: atomic without a transaction of its own
 * (all of them or none), a single round trip where BEGIN, three inserts and
 * COMMIT took five, and run by name, so knex does not build it again on
 * every call. Their events are published in the order given.
 */
export async function insertMeetings(db: Knex, rows: readonly NewMeetingRow[]): Promise<void> {
  const json = rows.map(({ meeting: m, event }, ord) => {
    const fields = { ord, id: m.id, mode: m.mode, organizer_id: m.organizerId, organizer_email: m.organizerEmail, ...changeableColumns(m), created_at: iso(m.createdAt) };
    // The event's payload goes in as the JSON text outboxInsert (or the service itself) made, not encoded again.
    return `${JSON.stringify(fields).slice(0, -1)},${outboxRowJson(event.row)}}`;
  });
  await runNamed(db, INSERT_MEETINGS, [`[${json.join(",")}]`]);
}

/** The columns of a meeting a change may write. */
function changeableColumns(m: MeetingRecord) {
  return {
    title: m.title,
    description: m.description,
    start_time: iso(m.startTime),
    end_time: iso(endTimeOf(m.startTime, m.duration)),
    duration: m.duration,
    participants: m.participants,
    status: m.status,
    sequence: m.sequence,
  };
}

const FIND_MEETING_SQL = `select ${MEETING_COLUMNS}, ${RESPONSES_COLUMN} from meetings where id = ? and mode = ?`;
const FIND_MEETING = namedStatement("find_meeting", FIND_MEETING_SQL);
const FIND_MEETING_LOCKED = namedStatement("find_meeting", `${FIND_MEETING_SQL} for update of meetings`);

/** One meeting of a mode; with `lock`, the row stays locked until the transaction ends. */
export async function findMeeting(db: Knex, id: string, mode: Mode, lock = false): Promise<MeetingRecord | undefined> {
  const [row] = await runNamed<MeetingRow>(db, lock ? FIND_MEETING_LOCKED : FIND_MEETING, [id, mode]);
  return row ? toRecord(row) : undefined;
}

/** What a meeting's reader is judged on (accessOf), beside the meeting as GET answers it. */
export interface MeetingResource {
  mode: Mode;
  organizerId: string;
  participants: string[];
  /** The public meeting's JSON text (toMeeting), as sent. */
  json: string;
}

/** A timestamp as formatTimestamp writes it: UTC, in whole seconds. */
const timestampJson = (column: string) => `'"' || to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') || '"'`;

/**
 * The public meeting up to its attendees, written by Postgres field for
 * field and byte for byte as JSON.stringify(toMeeting(record)) writes it
 * (to_json escapes text as JSON.stringify does; ids, durations and statuses
 * never need escaping), and the answers given: the attendees are written
 * here from the participants and the answers (attendeesOf), and a single
 * meeting's fields after them are constant. So a get reads four columns
 * instead of fourteen and sends the text untouched: no dates read and
 * written again, no record and resource built and encoded. (Building the
 * attendees in the statement too costs Postgres about half as much again.)
 */
const FIND_MEETING_RESOURCE = namedStatement(
  "find_meeting_resource",
  `select organizer_id, participants,
     '{"id":"' || id || '","title":' || to_json(title) || ',"description":' || to_json(description)
     || ',"startTime":' || ${timestampJson("start_time")} || ',"duration":"' || duration || '","participants":' || to_json(participants)
     || ',"status":"' || status || '","organizer":' || to_json(organizer_email) || ',"createdAt":' || ${timestampJson("created_at")}
     || ',"attendees":' as head, ${RESPONSES_COLUMN}
   from meetings where id = ? and mode = ?`,
);
/** What follows the attendees of a meeting that is not a series' occurrence (toMeeting). */
const SINGLE_MEETING_TAIL = ',"recurrence":null,"seriesId":null,"originalStartTime":null}';

/** One meeting of a mode as GET answers it (MeetingResource), read-only. */
export async function findMeetingResource(db: Knex, id: string, mode: Mode): Promise<MeetingResource | undefined> {
  const [row] = await runNamed<Pick<MeetingRow, "organizer_id" | "participants" | "responses"> & { head: string }>(db, FIND_MEETING_RESOURCE, [id, mode]);
  if (!row) return undefined;
  const attendees = JSON.stringify(attendeesOf(row.participants, answersOf(row.responses)));
  return { mode, organizerId: row.organizer_id, participants: row.participants, json: `${row.head}${attendees}${SINGLE_MEETING_TAIL}` };
}

/** Writes the new state of a meeting and brings its participant rows in line. */
export async function updateMeeting(trx: Knex.Transaction, m: MeetingRecord, now: Date): Promise<void> {
  await trx("meetings")
    .where({ id: m.id })
    .update({ ...changeableColumns(m), updated_at: iso(now) });
  await trx("meeting_participants").where({ meeting_id: m.id }).delete();
  await trx("meeting_participants").insert(participantRows(m));
}

/** Keeps one participant's answer. */
export async function saveResponse(trx: Knex.Transaction, meetingId: string, email: string, answer: GivenAnswer): Promise<void> {
  await trx("meeting_participants").where({ meeting_id: meetingId, email }).update({ response: answer.response, responded_at: iso(answer.respondedAt) });
}

/** Removes a meeting; its participant rows go with it (on delete cascade). */
export async function deleteMeeting(trx: Knex.Transaction, id: string): Promise<void> {
  await trx("meetings").where({ id }).delete();
}

// ---- the calendar list ---------------------------------------------------------

export interface CalendarQuery {
  mode: Mode;
  userId: string;
  email: string;
  plan: ListPlan;
  /** Position of the last meeting already seen. */
  after?: { startTime: Date; id: string };
  /** Meetings in the page. */
  limit: number;
  /** Most bytes of list items in the page past its first item, a comma after each counted; undefined: no limit. */
  itemBytes?: number | undefined;
}

/** One page: its list items as a JSON array's text, and whether more follow. */
export interface CalendarPage {
  itemsJson: string;
  hasMore: boolean;
}

/** Most rows a list reads from each index: the longest page and the one more row that tells whether more follow. */
const MOST_LISTED = MAX_MEETINGS_PAGE + 1;

/**
 * The list as one statement: the organizer's meetings and the attended ones
 * are each read in list order from their own index and merged, already
 * sorted, into the first `limit`. Keyset pagination on (start_time, id)
 * keeps pages stable while meetings are added.
 *
 * The attended branch takes its first MOST_LISTED participant rows, then
 * looks each meeting up and drops those the user organizes (the other branch
 * lists them). That can leave it short, yet never of a meeting the page
 * needs: every participant row before such a meeting is a meeting of the
 * page too. Taking the rows first keeps the branch a walk of the index of a
 * bounded length: filtered after the join, Postgres may prefer to read the
 * whole meetings table.
 *
 * Each index read stops at the fixed MOST_LISTED (the merge reads no more of
 * a branch than the page needs anyway), and only the final limit is a
 * parameter: the cost Postgres estimates for the prepared statement's
 * generic plan then compares fairly with its per-call plans, and where the
 * data allows (many users, none holding most of the rows) it keeps the
 * generic plan instead of planning the statement on every call.
 *
 * The answer is one row: the page's items as JSON text, each the list item
 * the meeting's row keeps (006_store_list_items), and whether a meeting
 * follows them (the statement reads one past the page). The text goes to
 * the client untouched: no row, date or array is parsed, nothing encoded
 * again. The items stop early where their running size passes `itemBytes`
 * (the first item always counts); a meeting then follows them too.
 */
export function calendarPageSql(q: CalendarQuery): { name: string; sql: string; bindings: unknown[] } {
  const page = readPage(q);
  const sql = calendarPageText(page);
  return { name: preparedName("calendar_page", sql), sql, bindings: calendarBindings(q, page.values) };
}

/** One branch of the page: its conditions and its order. */
interface CalendarBranch {
  where: string;
  order: string;
}

/** A branch's rows (`m` or `p`), their id column, and the comparison of the page's direction. */
type BranchRows = { rows: string; idColumn: string; cmp: string };

/**
 * The conditions a branch of the page may have past its mode and owner, in
 * the order of their placeholders: each its text on the branch's rows and
 * its values in a query, undefined when the query has none.
 */
const PAGE_CONDITIONS: ReadonlyArray<{ text: (b: BranchRows) => string; values: (q: CalendarQuery) => readonly unknown[] | undefined }> = [
  { text: (b) => `${b.rows}.status = ?`, values: (q) => (q.plan.status ? [q.plan.status] : undefined) },
  { text: (b) => `${b.rows}.start_time > ?`, values: (q) => (q.plan.startAfter ? [iso(q.plan.startAfter)] : undefined) },
  { text: (b) => `${b.rows}.start_time <= ?`, values: (q) => (q.plan.startAtOrBefore ? [iso(q.plan.startAtOrBefore)] : undefined) },
  { text: (b) => `${b.rows}.start_time < ?`, values: (q) => (q.plan.startBefore ? [iso(q.plan.startBefore)] : undefined) },
  { text: (b) => `${b.rows}.end_time > ?`, values: (q) => (q.plan.endAfter ? [iso(q.plan.endAfter)] : undefined) },
  { text: (b) => `${b.rows}.end_time <= ?`, values: (q) => (q.plan.endAtOrBefore ? [iso(q.plan.endAtOrBefore)] : undefined) },
  { text: (b) => `(${b.rows}.start_time, ${b.rows}.${b.idColumn}) ${b.cmp} (?::timestamptz, ?)`, values: (q) => (q.after ? [iso(q.after.startTime), q.after.id] : undefined) },
];

/**
 * A query's page read once: its direction, which PAGE_CONDITIONS it has (bit
 * i for the i-th; with the direction, the page's shape, which decides its
 * statement's text) and their values in placeholder order. The text itself
 * is written only for a shape not seen before (listCalendar).
 */
interface PageOfQuery {
  dir: "asc" | "desc";
  present: number;
  values: unknown[];
}

function readPage(q: CalendarQuery): PageOfQuery {
  if (!Number.isInteger(q.limit) || q.limit < 1 || q.limit > MAX_MEETINGS_PAGE) throw new RangeError(`a calendar page holds 1 to ${MAX_MEETINGS_PAGE} meetings, not ${q.limit}`);
  let present = 0;
  const values: unknown[] = [];
  for (let i = 0; i < PAGE_CONDITIONS.length; i++) {
    const given = PAGE_CONDITIONS[i]!.values(q);
    if (!given) continue;
    present |= 1 << i;
    values.push(...given);
  }
  return { dir: q.plan.direction, present, values };
}

/** The page's two branches (the organized meetings, the attended ones): each its mode, its owner, then the page's conditions. */
function calendarBranches({ dir, present }: PageOfQuery): { organized: CalendarBranch; attended: CalendarBranch } {
  const cmp = dir === "asc" ? ">" : "<";
  const branch = (b: BranchRows, ownerCondition: string): CalendarBranch => {
    const where = [`${b.rows}.mode = ?`, ownerCondition, ...PAGE_CONDITIONS.filter((_, i) => present & (1 << i)).map((c) => c.text(b))];
    return { where: where.join(" and "), order: `${b.rows}.start_time ${dir}, ${b.rows}.${b.idColumn} ${dir}` };
  };
  return { organized: branch({ rows: "m", idColumn: "id", cmp }, "m.organizer_id = ?"), attended: branch({ rows: "p", idColumn: "meeting_id", cmp }, "p.email = ?") };
}

/** The values of the page's statement, in the order of its placeholders (calendarPageText, each branch's as calendarBranches writes them). */
function calendarBindings(q: CalendarQuery, values: unknown[]): unknown[] {
  return [q.limit, q.itemBytes ?? null, q.mode, q.userId, ...values, q.mode, q.email, ...values, q.userId, q.limit];
}

function calendarPageText(page: PageOfQuery): string {
  const { dir } = page;
  const { organized, attended } = calendarBranches(page);
  return `select '[' || coalesce(string_agg(list_item, ',' order by start_time ${dir}, id ${dir}) filter (where fits), '') || ']' as items,
                 coalesce(bool_or(not fits), false) as has_more from (
            select *, n <= ? and (n = 1 or bytes <= coalesce(?::bigint, bytes)) as fits from (
            select *, row_number() over running as n, sum(octet_length(list_item) + 1) over running as bytes from (
            select * from (
              (select m.id, m.start_time, m.list_item from meetings m
                where ${organized.where} order by ${organized.order} limit ${MOST_LISTED})
              union all
              (select a.meeting_id, a.start_time, m.list_item
                 from (select p.meeting_id, p.start_time from meeting_participants p
                        where ${attended.where} order by ${attended.order} limit ${MOST_LISTED}) a
                 cross join lateral (select m.list_item from meetings m where m.id = a.meeting_id and m.organizer_id <> ?) m
                 order by a.start_time ${dir}, a.meeting_id ${dir})
            ) merged
            order by start_time ${dir}, id ${dir} limit ?::int + 1
          ) page window running as (order by start_time ${dir}, id ${dir} rows between unbounded preceding and current row)) numbered) judged`;
}

/**
 * The page's statement with `beside` as a column beside its own two, its
 * items given as the list's whole answer (`{"data":[…],"hasMore":…}`): the
 * answer of a page without recurring meetings is then the one string pg
 * read, sent on as it is. Written around the items in the service, it was
 * a second copy of the page, made when the reply was encoded: one more
 * 26 KB a list of 100 on the heap, and its scavenges (docs/benchmarks.md).
 */
const besidePage = (besideSql: string, pageSql: string) =>
  `select '${LIST_ANSWER.head}' || page.items || '${LIST_ANSWER.beforeHasMore}' || page.has_more || '${LIST_ANSWER.tail}' as answer, page.has_more, ${besideSql} as beside from (${pageSql}) page`;

/**
 * The page's statement with the value of `beside` next to it (a scalar
 * subquery: the versions of the caller's series, seriesVersionsSql), so a
 * list asks Postgres once whether recurring meetings may be on its page.
 */
export function calendarPageBesideSql(q: CalendarQuery, beside: { sql: string; bindings: unknown[] }): { name: string; sql: string; bindings: unknown[] } {
  const page = readPage(q);
  const sql = besidePage(beside.sql, calendarPageText(page));
  return { name: preparedName("calendar_page_beside", sql), sql, bindings: [...beside.bindings, ...calendarBindings(q, page.values)] };
}

/**
 * The page's statements, by the text of `beside` (one of a few constants)
 * and then by the page's shape (readPage): a list takes one of a few shapes
 * (its filter, a window, a cursor), so each statement's text is written,
 * named and numbered for pg once, not for every list; nor is its key, a
 * number, written out as text on every list.
 */
const calendarStatements = new Map<string, Map<number, NamedStatement>>();

/**
 * One page of the single meetings (also as the list's whole answer), and the value of `beside`
 * (calendarPageBesideSql), run by name straight on a pooled connection
 * (runNamed): knex built the statement again on every list (its bindings
 * formatted, `?` numbered, a runner and a pool acquire), about a sixth of
 * the service's CPU for a page of 100.
 */
export async function listCalendar(db: Knex, q: CalendarQuery, beside: { sql: string; bindings: unknown[] }): Promise<CalendarPage & { answerJson: string; beside: string | null }> {
  const page = readPage(q);
  const shape = page.present * 2 + (page.dir === "asc" ? 0 : 1);
  let ofBeside = calendarStatements.get(beside.sql);
  if (!ofBeside) calendarStatements.set(beside.sql, (ofBeside = new Map()));
  let statement = ofBeside.get(shape);
  if (!statement) ofBeside.set(shape, (statement = namedStatement("calendar_page_beside", besidePage(beside.sql, calendarPageText(page)))));
  const bindings = [...beside.bindings, ...calendarBindings(q, page.values)] as Knex.Value[];
  const [row] = await runNamed<{ answer: string; has_more: boolean; beside: string | null }>(db, statement, bindings);
  const { answer, has_more: hasMore } = row!;
  return { answerJson: answer, itemsJson: itemsOfListAnswer(answer), hasMore, beside: row!.beside };
}

/** Where a meeting of the caller's calendar sits in list order; undefined when it is not theirs. */
export async function findCalendarPosition(
  db: Knex,
  q: { mode: Mode; userId: string; email: string; id: string },
): Promise<{ startTime: Date; id: string } | undefined> {
  const row = (await db("meetings")
    .select("id", "start_time")
    .where({ id: q.id, mode: q.mode })
    .andWhere((w) => w.where("organizer_id", q.userId).orWhereRaw("? = any(participants)", [q.email]))
    .first()) as { id: string; start_time: Date } | undefined;
  return row ? { id: row.id, startTime: new Date(row.start_time) } : undefined;
}

// ---- busy intervals ----------------------------------------------------------------

export interface BusyQuery {
  mode: Mode;
  users: { userId: string; email: string }[];
  from: Date;
  to: Date;
}

/**
 * The busy time of each user over [from, to), in one statement: the confirmed
 * meetings they organize or attend and their time off that overlap the range, merged where they
 * overlap or touch. Merging here sends Postgres's reply, and the bus's, one
 * row per merged interval instead of one per meeting.
 *
 * Per user (a LATERAL subquery, so each branch is an index range scan on that
 * user's own rows): a meeting lasts at most two hours, so its start lies in
 * (from − 2 h, to); time off, of any length, is read by its end. In start order, a meeting opens a new interval when it
 * starts after every earlier one has ended (`before_max`); an interval ends
 * where the next one opens, at the latest end before it. A last row at
 * 'infinity' opens a final interval whose `before_max` ends the real last one.
 */
export function busySql(q: BusyQuery): { sql: string; bindings: unknown[] } {
  const earliestStart = iso(new Date(q.from.getTime() - LONGEST_MEETING_MS));
  const range = [earliestStart, iso(q.to), iso(q.from)];
  // One user (a day view) as plain values: Postgres's plan for an array guesses its length, so that its
  // generic plan never looked as cheap as the one made for each call, and the statement was planned on every call.
  const [only] = q.users;
  const whose =
    q.users.length === 1 && only
      ? { from: "(select ?::text as user_id, ?::text as email, 1::int8 as n) as w", bindings: [only.userId, only.email] }
      : { from: "unnest(?::text[], ?::text[]) with ordinality as w(user_id, email, n)", bindings: [q.users.map((u) => u.userId), q.users.map((u) => u.email)] };
  return {
    sql: `select w.user_id, w.n,
                 floor(extract(epoch from i.start_time))::int8 as start_s,
                 ceil(extract(epoch from i.end_time))::int8 as end_s
            from ${whose.from}
           cross join lateral (
             select start_time, lead(before_max) over (order by start_time) as end_time
               from (
                 select start_time, max(end_time) over (order by start_time rows between unbounded preceding and 1 preceding) as before_max
                   from (
                     select start_time, end_time from meetings
                      where mode = ? and organizer_id = w.user_id and status = 'confirmed'
                        and start_time > ? and start_time < ? and end_time > ?
                     union all
                     select start_time, end_time from meeting_participants
                      where mode = ? and email = w.email and status = 'confirmed'
                        and start_time > ? and start_time < ? and end_time > ? and response <> 'declined'
                     union all
                     select start_time, end_time from time_off
                      where mode = ? and user_id = w.user_id and end_time > ? and start_time < ?
                     union all
                     select 'infinity', 'infinity'
                   ) busy
               ) marked
              where before_max is null or start_time > before_max
           ) i
           where i.start_time < 'infinity'
           order by w.n, i.start_time`,
    bindings: [...whose.bindings, q.mode, ...range, q.mode, ...range, q.mode, iso(q.from), iso(q.to)],
  };
}

/**
 * busySql with the value of `beside` (a scalar subquery: the versions of the
 * users' series, seriesVersionsSql) as one more row after the intervals, so
 * busy time asks Postgres once whether recurring meetings count.
 */
function busyBesideSql(q: BusyQuery, beside: { sql: string; bindings: unknown[] }): { name: string; sql: string; bindings: unknown[] } {
  const busy = busySql(q);
  const sql = `select user_id, start_s, end_s, beside from (
                 select b.user_id, b.n, b.start_s, b.end_s, null::text as beside from (${busy.sql}) b
                 union all
                 select null, null, null, null, ${beside.sql}
               ) rows order by n nulls last, start_s`;
  return { name: preparedName("busy_beside", sql), sql, bindings: [...busy.bindings, ...beside.bindings] };
}

/** Each user's merged busy intervals, `[start, end)` in epoch seconds, in start order, and the value of `beside` (busyBesideSql). */
export async function busyIntervals(
  db: Knex,
  q: BusyQuery,
  beside: { sql: string; bindings: unknown[] },
): Promise<{ intervals: { userId: string; start: number; end: number }[]; beside: string | null }> {
  const users = [...new Map(q.users.map((u) => [u.userId, u])).values()];
  if (users.length === 0) return { intervals: [], beside: null };
  const { name, sql, bindings } = busyBesideSql({ ...q, users }, beside);
  const result = await db.raw(sql, bindings as Knex.RawBinding[]).options({ name });
  const rows = result.rows as { user_id: string | null; start_s: number | bigint | null; end_s: number | bigint | null; beside: string | null }[];
  // int8 arrives as a number from pg (libs/db) and may be a bigint from PGlite.
  return {
    intervals: rows.filter((r) => r.user_id !== null).map((r) => ({ userId: r.user_id!, start: Number(r.start_s), end: Number(r.end_s) })),
    beside: rows.at(-1)?.beside ?? null,
  };
}

// ---- recurring meetings: the series, who attends them, their exceptions (010_recurring_series) ----

interface SeriesRow extends MeetingColumns {
  recurrence: string;
  time_zone: string;
  last_end: Date;
  active_from: Date | null;
  /** By e-mail: [response, respondedAt]; a string where the driver leaves jsonb unread. */
  responses: Record<string, [GivenResponse, string]> | string;
}

interface ExceptionRow extends ContentColumns {
  series_id: string;
  original_start: Date;
}

function toSeries(r: SeriesRow): SeriesRecord {
  return {
    ...meetingFieldsOf(r),
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
  return { seriesId: r.series_id, originalStart: new Date(r.original_start), ...contentOf(r) };
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
 * one with series costs none more once they are kept (seriesStore.ts). The
 * organized series are an index range on (mode, organizer_id, last_end) whose
 * rows give their versions themselves; the attended ones a range on
 * series_participants' (mode, email, last_end), then each id by its primary
 * key (a lateral join: its `limit 1` keeps Postgres from a hash join that
 * read the whole table). Looking the organized ones up again by primary key
 * cost three buffer reads a series: with 200 series, most of the statement.
 * The branches are joined by `union all`: a series may come twice (its
 * organizer on its participants, several users of a busy query), and
 * readSeriesVersions drops the repeats, which costs less than the sort
 * Postgres ran for `union` (on PGlite, 1.2 vs 1.3–1.7 ms of CPU with 200
 * series, docs/benchmarks.md).
 */
export function seriesVersionsSql(q: SeriesVersionsQuery): { sql: string; bindings: unknown[] } {
  const from = q.from ? iso(q.from) : "-infinity";
  const to = q.to ? iso(q.to) : "infinity";
  return { sql: q.confirmedOnly ? CONFIRMED_SERIES_VERSIONS : SERIES_VERSIONS, bindings: [q.mode, q.users.map((u) => u.userId), from, to, q.mode, q.users.map((u) => u.email), from, to] };
}

/** seriesVersionsSql's text, written once: the same text each time, by which the list keeps its statements (listCalendar). */
function seriesVersionsText(confirmedOnly: boolean): string {
  const confirmed = confirmedOnly ? " and status = 'confirmed'" : "";
  return `(select string_agg(v.id || ':' || v.version, ',')
                  from (select id, version from meeting_series
                         where mode = ? and organizer_id = any(?::text[]) and last_end > ?::timestamptz and start_time < ?::timestamptz${confirmed}
                        union all
                        select s.id, s.version
                          from (select series_id from series_participants where mode = ? and email = any(?::text[]) and last_end > ?::timestamptz) p
                         cross join lateral (select id, version from meeting_series
                                              where id = p.series_id and start_time < ?::timestamptz${confirmed} limit 1) s) v)`;
}
const SERIES_VERSIONS = seriesVersionsText(false);
const CONFIRMED_SERIES_VERSIONS = seriesVersionsText(true);

/** `id:version,…` read back, each series once (seriesVersionsSql may name one twice, always at the version its row has). */
export function readSeriesVersions(text: string | null): { id: string; version: number }[] {
  if (!text) return [];
  const out = new Map<string, number>();
  for (const pair of text.split(",")) {
    const at = pair.lastIndexOf(":");
    out.set(pair.slice(0, at), Number(pair.slice(at + 1)));
  }
  return Array.from(out, ([id, version]) => ({ id, version }));
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

// ---- time off ------------------------------------------------------------------------

interface TimeOffRow {
  id: string;
  mode: Mode;
  user_id: string;
  start_time: Date;
  end_time: Date;
  reason: string;
  created_at: Date;
}

function toTimeOffRecord(row: TimeOffRow): TimeOffRecord {
  return { id: row.id, mode: row.mode, userId: row.user_id, start: new Date(row.start_time), end: new Date(row.end_time), reason: row.reason, createdAt: new Date(row.created_at) };
}

/**
 * Stores a time off unless the user already keeps `most` in this mode; false
 * then. One statement, so two concurrent requests cannot both pass the count.
 */
export async function insertTimeOff(db: Knex, t: TimeOffRecord, most: number): Promise<boolean> {
  const result = await db.raw(
    `insert into time_off (id, mode, user_id, start_time, end_time, reason, created_at)
     select ?, ?, ?, ?, ?, ?, ?
      where (select count(*) from time_off where mode = ? and user_id = ?) < ?`,
    [t.id, t.mode, t.userId, iso(t.start), iso(t.end), t.reason, iso(t.createdAt), t.mode, t.userId, most],
  );
  return ((result as { rowCount?: number }).rowCount ?? 0) === 1;
}

/** A user's time off in one mode, earliest start first. */
export async function listTimeOff(db: Knex, mode: Mode, userId: string): Promise<TimeOffRecord[]> {
  const rows = (await db("time_off").select("*").where({ mode, user_id: userId }).orderBy([{ column: "start_time" }, { column: "id" }])) as TimeOffRow[];
  return rows.map(toTimeOffRecord);
}

/** Removes one of a user's time off; false when they have none with this id in this mode. */
export async function deleteTimeOff(db: Knex, mode: Mode, userId: string, id: string): Promise<boolean> {
  return (await db("time_off").where({ id, mode, user_id: userId }).delete()) === 1;
}

// ---- idempotency keys ------------------------------------------------------------------

// Kept by the shared writes of `@sched/db/idempotent-writes`; swept here on the service's schedule.
export { deleteExpiredIdempotencyKeys } from "@sched/db/idempotent-writes";
