// `@sched/db/event-log`: the in-process bus's events kept in Postgres, for `npm start` alone, so the
// bus (in every image) needs no database code and the database code no embedded Postgres.
import type { EventLog, NewEvent, PublishState, StoredEvent } from "@sched/bus";
import type { Knex } from "knex";
import { joinsCallersTransaction } from "./embedded.js";
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

  async storing<T>(work: (log: EventLog) => Promise<T>): Promise<T> {
    if (joinsCallersTransaction(this.db)) return work(this);
    return this.db.transaction((trx) => work(new KnexEventLog(trx)));
  }

  async publishState(stream: string, msgId: string): Promise<PublishState> {
    const { rows } = await this.db.raw<{ rows: Array<{ duplicate: boolean; last_msg_id: string | null }> }>(
      `select exists (select 1 from ${EVENT_LOG_SCHEMA}.events where msg_id = ?) as duplicate,
              (select msg_id from ${EVENT_LOG_SCHEMA}.events where stream = ? order by stream_sequence desc limit 1) as last_msg_id`,
      [msgId, stream],
    );
    return { duplicate: rows[0]!.duplicate, lastMsgId: rows[0]!.last_msg_id ?? undefined };
  }

  async append(event: NewEvent): Promise<void> {
    await this.db.withSchema(EVENT_LOG_SCHEMA).table("events").insert({
      stream: event.stream,
      subject: event.subject,
      payload: JSON.stringify(event.payload),
      headers: JSON.stringify(event.headers),
      msg_id: event.msgId,
    });
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
}
