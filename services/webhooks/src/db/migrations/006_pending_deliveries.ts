import type { Migration } from "@sched/db";

/**
 * Pending work moves to a table of its own, `pending_deliveries`: one narrow
 * row a delivery still owed, inserted with it, leased in place by a claim and
 * deleted when the delivery settles. `deliveries` keeps the record the API
 * lists, written when queued and once more, in place, when an attempt settles
 * it: with no partial index of pending deliveries on it any more, no column of
 * that update is indexed.
 *
 * Per delivery this writes 5 index entries instead of 8 (`deliveries`' key,
 * id and per-endpoint list at insert; the pending row's key and due time),
 * and every later version of either row is written in place. The pending
 * row's key (endpoint, meeting, event, delivery) is also the order check's
 * index: a meeting's first pending event for an endpoint is the first entry
 * under that endpoint and meeting. No foreign key: its check would lock the
 * delivery's row (a log record per delivery) and cost a lookup; a deleted
 * endpoint takes its pending rows with it in the same statement, and the
 * hourly purge of old events deletes any pending row whose delivery is gone.
 */
export const pendingDeliveries: Migration = {
  name: "006_pending_deliveries",
  async up(db) {
    await db.raw(`
      create table pending_deliveries (
        endpoint_id varchar(28) not null,
        meeting_id varchar(64) not null,
        event_seq bigint not null,
        delivery_seq bigint not null,
        next_attempt_at timestamptz not null,
        lease_until timestamptz,
        primary key (endpoint_id, meeting_id, event_seq, delivery_seq)
      ) with (fillfactor = 50)`);
    await db.raw("create index pending_deliveries_due on pending_deliveries (endpoint_id, next_attempt_at)");
    // A lease held now keeps its delivery until it runs out, as it did.
    await db.raw(`
      insert into pending_deliveries (endpoint_id, meeting_id, event_seq, delivery_seq, next_attempt_at, lease_until)
      select endpoint_id, meeting_id, event_seq, seq, next_attempt_at, lease_until from deliveries where state = 'pending'`);
    await db.raw("drop index deliveries_in_order");
    await db.raw("drop index deliveries_pending_by_endpoint");
    await db.raw("alter table deliveries drop column lease_until");
  },
  async down(db) {
    await db.raw("alter table deliveries add column lease_until timestamptz");
    await db.raw(`
      update deliveries d set lease_until = p.lease_until, next_attempt_at = p.next_attempt_at
      from pending_deliveries p where p.delivery_seq = d.seq and d.state = 'pending'`);
    await db.raw("create index deliveries_in_order on deliveries (endpoint_id, meeting_id, event_seq) where state = 'pending'");
    await db.raw("create index deliveries_pending_by_endpoint on deliveries (endpoint_id, next_attempt_at) where state = 'pending'");
    await db.raw("drop table pending_deliveries");
  },
};
