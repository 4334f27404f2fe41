import type { Knex } from "@sched/db";
import type { EventDef, PayloadOf } from "@sched/proto";

/**
 * Records an event in the outbox inside the caller's transaction: it is
 * published if and only if the change it describes commits. `msgId` is the
 * bus de-duplication id and is unique in the outbox too.
 */
export async function enqueueEvent<E extends EventDef>(trx: Knex, def: E, payload: PayloadOf<E>, msgId: string): Promise<void> {
  const checked: unknown = def.payload.parse(payload);
  await trx("outbox").insert({ subject: def.subject, payload: JSON.stringify(checked), msg_id: msgId });
}
