// `@sched/db/event-log`: the in-process bus's events kept in Postgres, for `npm start` alone, so the
// bus (in every image) needs no database code and the database code no embedded Postgres.
import type { AppendOutcome, EventLog, NewEvent, StoredEvent, StoringOutcome } from "@sched/bus";
import type { Knex } from "knex";
import { joinsCallersTransaction, whenCallersTransactionEnds } from "./embedded.js";
import { inBackground } from "./embeddedSession.js";
import type { Migration } from "./index.js";

/** The schema the durable event log lives in. */
export const EVENT_LOG_SCHEMA = "bus";

export const eventLogMigrations: readonly Migration[] = [
  {
    name: "0001_event_log",
    up: async (db) => {
      await db.raw(`
        create table events (
          stream_sequence bigint generated always as identity primary key,
          stream text not null,
          subject text not null,
          payload jsonb not null,
          headers jsonb not null,
          msg_id text not null,
          stored_at timestamptz not null default now(),
          constraint events_msg_id_unique unique (msg_id)
        )`);
      // A publish with `after` asks for its stream's last event.
      await db.raw("create index events_stream_last on events (stream, stream_sequence)");
      await db.raw(`
        create table consumer_positions (
          durable text primary key,
          ack_floor bigint not null
        )`);
    },
    down: async (db) => {
      await db.raw("drop table if exists consumer_positions");
      await db.raw("drop table if exists events");
    },
  },
];

interface EventRow {
  stream_sequence: number;
  subject: string;
  payload: unknown;
  headers: Record<string, string>;
}

/**
 * The msgId of the last event of the stream named by the SQL expression
 * `stream`, read backwards through events_stream_last. Asked for with
 * `stream = …`, an analyzed log is planned as a backwards walk of the whole
 * log by sequence until an event of the stream turns up (the planner takes
 * every stream for as common as the average): a rare stream's last event
 * then costs a read of every event after it. The range on `stream` (not an
 * equality, which the planner would drop from the order) keeps the order
 * the index's own, so its walk is the only plan that needs no sort.
 */
export const lastOfStream = (stream: string) =>
  `select e.msg_id from (select ${stream}::text as s) as given, ${EVENT_LOG_SCHEMA}.events e
    where e.stream >= given.s and e.stream <= given.s order by e.stream desc, e.stream_sequence desc limit 1`;

/**
 * Whether `events`, were none of them stored already, would all be stored
 * one after the other: no msgId twice, and each `after` of an event that
 * follows another of its stream among them names that one.
 */
function inBatchChain(events: readonly NewEvent[]): boolean {
  const msgIds = new Set<string>();
  const lastOfStreams = new Map<string, string>();
  for (const { stream, msgId, after } of events) {
    if (msgIds.has(msgId)) return false;
    const last = lastOfStreams.get(stream);
    if (after !== undefined && last !== undefined && after !== last) return false;
    msgIds.add(msgId);
    lastOfStreams.set(stream, msgId);
  }
  return true;
}

/** The `after` of each stream's first event among `events` that has one: what the stored stream must end with. */
function firstFollows(events: readonly NewEvent[]): Array<{ stream: string; after: string }> {
  const seen = new Set<string>();
  const follows: Array<{ stream: string; after: string }> = [];
  for (const { stream, after } of events) {
    if (!seen.has(stream) && after !== undefined) follows.push({ stream, after });
    seen.add(stream);
  }
  return follows;
}

/**
 * The event log in a database, so that what the in-process bus accepted and
 * where each durable consumer stands outlive the process: an event is
 * committed before its publish resolves (or, published from an outbox relay's
 * transaction on the shared embedded database, with that transaction), a
 * position when its event is acknowledged. Needs only a handle on its schema
 * (EVENT_LOG_SCHEMA, brought up to date with eventLogMigrations) and reads
 * lazily, so opening it costs nothing however long the log is. Its tables are
 * named with their schema: a query that joins the caller's transaction runs
 * under the caller's search path.
 */
export class KnexEventLog implements EventLog {
  constructor(private readonly db: Knex) {}

  /**
   * In the caller's transaction when it holds the session (an outbox relay's),
   * ended with it; otherwise in one of its own, so the publish has the
   * session before it takes its place in the bus's line, and never waits
   * there for a transaction whose publishes wait behind it.
   */
  async storing<T>(work: (log: EventLog) => Promise<T>, ended: (outcome: StoringOutcome) => void): Promise<T> {
    if (joinsCallersTransaction(this.db)) {
      whenCallersTransactionEnds(this.db, ended);
      return work(this);
    }
    try {
      const result = await this.db.transaction((trx) => work(new KnexEventLog(trx)));
      ended("kept");
      return result;
    } catch (err) {
      // A failed commit is a rolled-back transaction too.
      ended("undone");
      throw err;
    }
  }

  /**
   * One statement when every event is stored (the common case: an outbox
   * relay's batch of new events, each after the one before); otherwise the
   * events are appended one at a time, as appendOne says.
   */
  async append(events: readonly NewEvent[]): Promise<AppendOutcome[]> {
    const whole = events.length > 1 && inBatchChain(events) ? await this.appendAll(events) : undefined;
    if (whole) return whole;
    const outcomes: AppendOutcome[] = [];
    for (const event of events) outcomes.push(await this.appendOne(event));
    return outcomes;
  }

  /**
   * Stores all of `events` in their order in one statement, or none of them
   * (undefined) when one of their msgIds is stored already or the `after`
   * of a stream's first event among them is not that stream's last event.
   */
  private async appendAll(events: readonly NewEvent[]): Promise<AppendOutcome[] | undefined> {
    const rows = events.map(({ stream, subject, payload, headers, msgId }) => ({ stream, subject, payload, headers, msg_id: msgId }));
    // Each msgId looked up by the unique index (the lateral's limit keeps it a probe per event): as a semi join,
    // planned for a batch of a hundred, the whole log was read on every append, and the log only grows.
    const { rows: stored } = await this.db.raw<{ rows: Array<{ stream_sequence: number; msg_id: string }> }>(
      `with batch as (select e, n from jsonb_array_elements(?::jsonb) with ordinality as b(e, n)),
            follows as (select f->>'stream' as stream, f->>'after' as after from jsonb_array_elements(?::jsonb) as c(f))
       insert into ${EVENT_LOG_SCHEMA}.events (stream, subject, payload, headers, msg_id)
       select e->>'stream', e->>'subject', e->'payload', e->'headers', e->>'msg_id' from batch
        where not exists (select 1 from batch as given cross join lateral (select 1 from ${EVENT_LOG_SCHEMA}.events where msg_id = given.e->>'msg_id' limit 1) as stored)
          and not exists (select 1 from follows where after is distinct from (${lastOfStream("follows.stream")}))
        order by n
       returning stream_sequence, msg_id`,
      [JSON.stringify(rows), JSON.stringify(firstFollows(events))],
    );
    if (stored.length !== events.length) return undefined;
    const positions = new Map(stored.map((row) => [row.msg_id, Number(row.stream_sequence)]));
    return events.map((event) => ({ stored: true, streamSequence: positions.get(event.msgId)! }));
  }

  /**
   * One statement when the event is stored (a duplicate's msgId and a stream
   * whose last event is not `after` store nothing); a second one, only then,
   * tells which of the two it was.
   */
  private async appendOne(event: NewEvent): Promise<AppendOutcome> {
    const after = event.after ?? null;
    const { rows } = await this.db.raw<{ rows: Array<{ stream_sequence: number }> }>(
      `insert into ${EVENT_LOG_SCHEMA}.events (stream, subject, payload, headers, msg_id)
       select ?, ?, ?::jsonb, ?::jsonb, ?
        where ?::text is null or ?::text is not distinct from (${lastOfStream("?")})
       on conflict (msg_id) do nothing
       returning stream_sequence`,
      [event.stream, event.subject, JSON.stringify(event.payload), JSON.stringify(event.headers), event.msgId, after, after, event.stream],
    );
    if (rows[0]) return { stored: true, streamSequence: Number(rows[0].stream_sequence) };
    const { rows: why } = await this.db.raw<{ rows: Array<{ duplicate: boolean; last_msg_id: string | null }> }>(
      `select exists (select 1 from ${EVENT_LOG_SCHEMA}.events where msg_id = ?) as duplicate, (${lastOfStream("?")}) as last_msg_id`,
      [event.msgId, event.stream],
    );
    return { stored: false, duplicate: why[0]!.duplicate, lastMsgId: why[0]!.last_msg_id ?? undefined };
  }

  async read(position: number, subjects: ReadonlySet<string>, limit: number): Promise<StoredEvent[]> {
    const rows: EventRow[] = await this.db
      .withSchema(EVENT_LOG_SCHEMA)
      .table("events")
      .select("stream_sequence", "subject", "payload", "headers")
      .where("stream_sequence", ">", position)
      .whereIn("subject", [...subjects])
      .orderBy("stream_sequence")
      .limit(limit);
    return rows.map((r) => ({ streamSequence: Number(r.stream_sequence), subject: r.subject, payload: r.payload, headers: r.headers }));
  }

  async ackFloor(durable: string): Promise<number> {
    const row: { ack_floor: number } | undefined = await this.db.withSchema(EVENT_LOG_SCHEMA).table("consumer_positions").where({ durable }).first("ack_floor");
    return row ? Number(row.ack_floor) : 0;
  }

  async acknowledge(durable: string, position: number): Promise<void> {
    await this.db.withSchema(EVENT_LOG_SCHEMA).table("consumer_positions").insert({ durable, ack_floor: position }).onConflict("durable").merge();
  }

  async prune(stream: string, maxAgeMs: number): Promise<number> {
    // Background work: on the embedded database's one session it waits behind requests.
    return inBackground(async () => {
      const { rows } = await this.db.raw<{ rows: Array<{ pruned: number }> }>(
        `with gone as (
           delete from ${EVENT_LOG_SCHEMA}.events
            where stream = ? and stored_at < now() - ? * interval '1 millisecond'
              and stream_sequence < (select max(stream_sequence) from ${EVENT_LOG_SCHEMA}.events where stream = ?)
           returning 1
         )
         select count(*)::int as pruned from gone`,
        [stream, maxAgeMs, stream],
      );
      return rows[0]?.pruned ?? 0;
    });
  }
}
