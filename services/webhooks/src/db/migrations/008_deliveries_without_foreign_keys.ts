import type { Migration } from "@sched/db";

/**
 * Drops the foreign keys of `deliveries` to `endpoints` and `events`. Each
 * cost a check per delivery recorded (a trigger, a lookup and a row lock)
 * that the recording statement already guarantees: it inserts a delivery's
 * event in the same statement, and locks the batch's endpoints once each
 * against a delete (a deleted endpoint is owed nothing). What the cascades
 * did is written out: deleting an endpoint deletes its deliveries, and the
 * purge of old events deletes theirs, each in the same statement.
 */
export const deliveriesWithoutForeignKeys: Migration = {
  name: "008_deliveries_without_foreign_keys",
  async up(db) {
    await db.raw("alter table deliveries drop constraint deliveries_endpoint_id_fkey, drop constraint deliveries_event_seq_fkey");
  },
  async down(db) {
    await db.raw("delete from deliveries d where not exists (select 1 from endpoints e where e.id = d.endpoint_id) or not exists (select 1 from events ev where ev.seq = d.event_seq)");
    await db.raw(`
      alter table deliveries
        add constraint deliveries_endpoint_id_fkey foreign key (endpoint_id) references endpoints (id) on delete cascade,
        add constraint deliveries_event_seq_fkey foreign key (event_seq) references events (seq) on delete cascade`);
  },
};
