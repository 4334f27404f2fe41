import type { Knex } from "@sched/db";
import { newId } from "@sched/ids";
import { enabledEndpoints, ownerKey, recordEvents, type EventToRecord } from "../db/queries.js";
import { subscribes } from "../domain/publicEvent.js";

/**
 * Records the events of one consumed batch, each with a delivery for every
 * enabled endpoint of its user and mode subscribed to its type: the owners'
 * endpoints read in one statement, the events and their deliveries written
 * in another (so all at once, or none). An event seen before (a redelivery,
 * or twice in the batch) records nothing again. How many events were new.
 */
export async function recordBatch(db: Knex, records: readonly EventToRecord[]): Promise<number> {
  const seen = new Set<string>();
  const fresh = records.filter((r) => !seen.has(r.sourceEventId) && seen.add(r.sourceEventId));
  const endpoints = await enabledEndpoints(db, fresh.map((r) => ({ userId: r.userId, mode: r.event.mode })));
  const owed = fresh.map((r) => ({
    ...r,
    deliveries: (endpoints.get(ownerKey(r.userId, r.event.mode)) ?? []).filter((e) => subscribes(e.events, r.event.type)).map((e) => ({ id: newId("whd"), endpointId: e.id })),
  }));
  return recordEvents(db, owed);
}
