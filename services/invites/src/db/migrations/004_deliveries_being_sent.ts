import type { Migration } from "@sched/db";

/**
 * A delivery being sent names the attempt sending it and since when,
 * committed before the provider is called: a worker that finds it so does
 * not send it again (the attempt that holds the outcome records it).
 */
export const deliveriesBeingSent: Migration = {
  name: "004_deliveries_being_sent",
  async up(db) {
    await db.raw("alter table deliveries add column if not exists sending_attempt varchar(64), add column if not exists sending_since timestamptz");
  },
  async down(db) {
    await db.raw("alter table deliveries drop column if exists sending_attempt, drop column if exists sending_since");
  },
};
