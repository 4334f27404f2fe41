import type { Migration } from "@sched/db";

/**
 * Two cuts to the Postgres work of each delivery.
 *
 * The lease is the due time: a claim moves `next_attempt_at` to the lease's
 * end. A leased delivery then leaves the front of `deliveries_due`, so a claim
 * reads only due entries, where it used to step over every delivery claimed
 * and not yet settled (all still pending) at each claim: hundreds of index
 * entries and rows per delivery at 1,000 deliveries a second.
 *
 * A delivery's latest attempt is kept on its row, written by the same update
 * that settles it; `delivery_attempts` holds only the earlier ones, moved
 * there when the next attempt is written. A delivery that succeeds at once,
 * nearly all of them, then costs no attempt row, no index entry and no
 * foreign-key check. Attempts written before this stay where they are.
 */
export const deliveriesLeaseAndLastAttempt: Migration = {
  name: "004_deliveries_lease_and_last_attempt",
  async up(db) {
    await db.raw(`
      alter table deliveries
        add column last_attempt_at timestamptz,
        add column last_status integer,
        add column last_error text,
        add column last_duration_ms integer`);
    // A lease held now keeps its delivery until it runs out, as it did.
    await db.raw("update deliveries set next_attempt_at = greatest(next_attempt_at, lease_until) where state = 'pending' and lease_until is not null");
    await db.raw("alter table deliveries drop column lease_until");
  },
  async down(db) {
    await db.raw("alter table deliveries add column lease_until timestamptz");
    await db.raw(`
      insert into delivery_attempts (delivery_seq, attempt, at, status, error, duration_ms)
      select seq, attempts, last_attempt_at, last_status, last_error, last_duration_ms from deliveries where last_attempt_at is not null
      on conflict (delivery_seq, attempt) do nothing`);
    await db.raw("alter table deliveries drop column last_attempt_at, drop column last_status, drop column last_error, drop column last_duration_ms");
  },
};
