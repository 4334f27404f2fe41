import type { Knex } from "@sched/db";
import type { EventDef, PayloadOf } from "@sched/proto";
import { currentTraceContext } from "@sched/telemetry";

/**
 * The outbox row of an event as one INSERT statement, for a service that
 * folds it into a statement of its own (a data-modifying WITH): one statement
 * is atomic, so the event is published if and only if that change commits,
 * without a transaction around them. The payload is checked here.
 */
export function outboxInsert<E extends EventDef>(def: E, payload: PayloadOf<E>, msgId: string): { sql: string; bindings: unknown[] } {
  const checked: unknown = def.payload.parse(payload);
  // The trace of the request that causes the event: the relay publishes it as part of that trace.
  const trace = currentTraceContext();
  return {
    sql: "insert into outbox (subject, payload, msg_id, trace_context) values (?, ?, ?, ?)",
    bindings: [def.subject, JSON.stringify(checked), msgId, trace ? JSON.stringify(trace) : null],
  };
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
