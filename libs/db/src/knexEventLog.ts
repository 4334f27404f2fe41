// `@sched/db/event-log`: the in-process bus's events kept in Postgres, for `npm start` alone, so the
// bus (in every image) needs no database code and the database code no embedded Postgres.
import type { AppendOutcome, EventLog, NewEvent, StoredEvent } from "@sched/bus";
import type { Knex } from "knex";
import { joinsCallersTransaction } from "./embedded.js";
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
   * In the caller's transaction when it holds the session (an outbox relay's);
   * otherwise in one of its own, so the publish has the session before it
   * takes its place in the bus's line, and never waits there for a
   * transaction whose publishes wait behind it.
   */
  async storing<T>(work: (log: EventLog) => Promise<T>): Promise<T> {
    if (joinsCallersTransaction(this.db)) return work(this);
    return this.db.transaction((trx) => work(new KnexEventLog(trx)));
  }

  async append(event: NewEvent, after?: string): Promise<AppendOutcome> {
    const { rows } = await this.db.raw<{ rows: Array<{ stored: boolean; duplicate: boolean; last_msg_id: string | null }> }>(
      `with state as (
         select exists (select 1 from ${EVENT_LOG_SCHEMA}.events where msg_id = ?) as duplicate,
                (select msg_id from ${EVENT_LOG_SCHEMA}.events where stream = ? order by stream_sequence desc limit 1) as last_msg_id
       ), stored as (
         insert into ${EVENT_LOG_SCHEMA}.events (stream, subject, payload, headers, msg_id)
         select ?, ?, ?::jsonb, ?::jsonb, ? from state
          where not state.duplicate and (?::text is null or state.last_msg_id is not distinct from ?::text)
         returning 1
       )
       select exists (select 1 from stored) as stored, state.duplicate, state.last_msg_id from state`,
      [event.msgId, event.stream, event.stream, event.subject, JSON.stringify(event.payload), JSON.stringify(event.headers), event.msgId, after ?? null, after ?? null],
    );
    const row = rows[0]!;
    return { stored: row.stored, duplicate: row.duplicate, lastMsgId: row.last_msg_id ?? undefined };
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
