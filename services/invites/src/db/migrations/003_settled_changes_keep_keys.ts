import type { Migration } from "@sched/db";

/**
 * A settled change keeps its key and outcome, not the meeting it carried,
 * and a participant keeps only their newest settled delivery of a meeting:
 * the ledger grows by a small row per change rather than a copy of the
 * meeting and a row per participant every time. Rows written before this
 * are brought to the same shape.
 */
export const settledChangesKeepKeys: Migration = {
  name: "003_settled_changes_keep_keys",
  async up(db) {
    await db.raw("alter table meeting_changes alter column meeting drop not null");
    await db.raw("update meeting_changes set meeting = null, trace_context = null where state <> 'pending' and meeting is not null");
    await db.raw(`
      delete from deliveries d
       where d.state in ('sent', 'simulated', 'failed')
         and exists (select 1 from deliveries n
                      where n.meeting_id = d.meeting_id and n.email = d.email and n.sequence > d.sequence and n.state in ('sent', 'simulated'))`);
  },
  async down(db) {
    // The dropped meetings cannot come back; settled changes are never read for them, so an empty object holds the column's old rule.
    await db.raw("update meeting_changes set meeting = '{}'::jsonb where meeting is null");
    await db.raw("alter table meeting_changes alter column meeting set not null");
  },
};
