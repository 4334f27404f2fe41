import type { Knex } from "@sched/db";
import { newId } from "@sched/ids";
import { enabledEndpoints, recordEvent, type EventToRecord, type SubscribedEndpoint } from "../db/queries.js";
import { subscribes } from "../domain/publicEvent.js";

/**
 * Records events of one consumed batch, in its transaction: each with a
 * delivery for every enabled endpoint of its user and mode subscribed to its
 * type, in one statement. A user's endpoints are read once a batch, not once
 * an event; the batch's transaction sees them as they were when first read.
 * A redelivered event records nothing again: false.
 */
export function batchRecorder(trx: Knex): (record: EventToRecord) => Promise<boolean> {
  const endpointsOf = new Map<string, Promise<SubscribedEndpoint[]>>();
  return async (record) => {
    const owner = `${record.userId} ${record.event.mode}`;
    let endpoints = endpointsOf.get(owner);
    if (!endpoints) {
      endpoints = enabledEndpoints(trx, record.userId, record.event.mode);
      endpointsOf.set(owner, endpoints);
    }
    const owed = (await endpoints).filter((e) => subscribes(e.events, record.event.type));
    return recordEvent(trx, record, owed.map((e) => ({ id: newId("whd"), endpointId: e.id })));
  };
}
