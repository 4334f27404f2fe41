import type { Knex } from "@sched/db";
import type { EventDef, PayloadOf } from "@sched/proto";
import { currentTraceContext } from "@sched/telemetry";

/**
 * The outbox row of an event as one INSERT statement, for a service that
 * folds it into a statement of its own (a data-modifying WITH): one statement
 * is atomic, so the event is published if and only if that change commits,
 * without a transaction around them. The payload is checked here.
 */
export function outboxInsert<E extends EventDef>(def: E, payload: PayloadOf<E>, msgId: string): OutboxInsert {
  const checked: unknown = def.payload.parse(payload);
  return encodedOutboxInsert(def, JSON.stringify(checked), msgId);
}

/**
 * As outboxInsert, for an event whose JSON text its service wrote itself
 * from values it had already checked (the request's, its own): neither
 * checked nor encoded again here, so that service's tests hold the text to
 * the event's schema.
 */
export function encodedOutboxInsert(def: EventDef, payloadJson: string, msgId: string): OutboxInsert {
  // The trace of the request that causes the event: the relay publishes it as part of that trace.
  const trace = currentTraceContext();
  const row: OutboxRowText = { subject: def.subject, payload: payloadJson, msgId, traceContext: trace ? JSON.stringify(trace) : null };
  return { sql: "insert into outbox (subject, payload, msg_id, trace_context) values (?, ?, ?, ?)", bindings: [row.subject, row.payload, row.msgId, row.traceContext], row };
}

/** An outbox row as it is stored: its payload and trace context as JSON text. */
export interface OutboxRowText {
  subject: string;
  payload: string;
  msgId: string;
  traceContext: string | null;
}

/** One event's outbox insert: on its own (`sql`, `bindings`), or as `row`, one of many inserted by outboxInsertFrom. */
export interface OutboxInsert {
  sql: string;
  bindings: unknown[];
  row: OutboxRowText;
}

/**
 * The outbox rows of several events in one INSERT, for a statement that
 * inserts many changes at once: `source` is a set of the caller's statement
 * with the columns `subject`, `payload` (jsonb), `msg_id`, `trace_context`
 * (jsonb) and `ord`, the order to publish them in. The fields of
 * outboxRowJson give them.
 */
export function outboxInsertFrom(source: string): string {
  return `insert into outbox (subject, payload, msg_id, trace_context) select subject, payload, msg_id, trace_context from ${source} order by ord`;
}

/** A row's outbox fields as members of a JSON object (no braces), ready to join other members: its payload goes in as the text already made, not encoded again. */
export function outboxRowJson(row: OutboxRowText): string {
  return `"subject":${JSON.stringify(row.subject)},"msg_id":${JSON.stringify(row.msgId)},"payload":${row.payload},"trace_context":${row.traceContext ?? "null"}`;
}

/**
 * Records an event in the outbox inside the caller's transaction: it is
 * published if and only if the change it describes commits. `msgId` is the
 * bus de-duplication id and is unique in the outbox too.
 */
export async function enqueueEvent<E extends EventDef>(trx: Knex, def: E, payload: PayloadOf<E>, msgId: string): Promise<void> {
  const { sql, bindings } = outboxInsert(def, payload, msgId);
  await trx.raw(sql, bindings as Knex.RawBinding[]);
}
