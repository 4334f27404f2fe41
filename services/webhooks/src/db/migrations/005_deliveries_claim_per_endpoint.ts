import type { Migration } from "@sched/db";

/**
 * Claims take each endpoint's earliest due deliveries from an index of
 * pending deliveries by endpoint and due time, and stop at what the endpoint
 * has room for, instead of reading every due delivery of all endpoints (the
 * planner chose a bitmap scan of the whole `deliveries_due` index and a sort,
 * so each claim cost as much as the backlog). `deliveries_due` is dropped:
 * nothing else read it.
 *
 * The lease is again a column of its own, `lease_until`, in no index: a claim
 * then changes no indexed column, and Postgres can update the row in place on
 * its page (a HOT update), adding no entry to any of the table's five
 * indexes. The fillfactor of 80 (002) left room for about a third of the
 * claims; at 50 every claim fits beside its row (measured: 0.37 of the claims
 * in place at 80, 1.00 at 50). A claim steps over its endpoint's leased
 * deliveries, at most what the endpoint may have claimed ahead. A lease held
 * now as a moved due time keeps its delivery until it runs out, as before.
 */
export const deliveriesClaimPerEndpoint: Migration = {
  name: "005_deliveries_claim_per_endpoint",
  async up(db) {
    await db.raw("alter table deliveries add column lease_until timestamptz");
    await db.raw("create index deliveries_pending_by_endpoint on deliveries (endpoint_id, next_attempt_at) where state = 'pending'");
    await db.raw("drop index deliveries_due");
    await db.raw("alter table deliveries set (fillfactor = 50)");
  },
  async down(db) {
    await db.raw("alter table deliveries set (fillfactor = 80)");
    await db.raw("create index deliveries_due on deliveries (next_attempt_at) where state = 'pending'");
    await db.raw("drop index deliveries_pending_by_endpoint");
    await db.raw("update deliveries set next_attempt_at = greatest(next_attempt_at, lease_until) where state = 'pending' and lease_until is not null");
    await db.raw("alter table deliveries drop column lease_until");
  },
};
