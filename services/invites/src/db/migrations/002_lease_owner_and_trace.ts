import type { Migration } from "@sched/db";

/**
 * Who holds a change's lease, so only that worker settles it; and the W3C
 * trace context of the event, so that delivery joins the trace of the
 * request behind it.
 */
export const addLeaseOwnerAndTrace: Migration = {
  name: "002_lease_owner_and_trace",
  async up(db) {
    await db.raw("alter table meeting_changes add column if not exists lease_owner varchar(64), add column if not exists trace_context jsonb");
  },
  async down(db) {
    await db.raw("alter table meeting_changes drop column if exists lease_owner, drop column if exists trace_context");
  },
};
