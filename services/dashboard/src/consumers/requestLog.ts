import type { Bus, Stoppable } from "@sched/bus";
import type { Knex } from "@sched/db";
import { requestsServed } from "@sched/proto";
import { storeRequestBatch } from "../db/queries.js";

/** Stores the batches of request metadata the gateways publish; a batch seen before stores nothing. */
export function consumeRequestLog(bus: Bus, db: Knex): Promise<Stoppable> {
  return bus.consumeBatches({ durable: "dashboard-request-log", events: [requestsServed], maxBatch: 20, backoffMs: [500, 2_000, 10_000] }, async (messages) => {
    for (const message of messages) {
      const { batchId, requests } = message.payload;
      await storeRequestBatch(db, batchId, requests);
    }
  });
}
