import type { Migration } from "@sched/db";

/**
 * Changes of a recurring meeting: the series they belong to (the series'
 * own changes and those of its occurrences, its exceptions) and, while
 * pending, the series' rule, zone and cancelled occurrences from the event.
 * A series and its exceptions share one sequence counter, so the series,
 * not each occurrence, is what keeps their changes in order: an update of
 * one occurrence waits for the series' invitation before it. The rows of
 * an occurrence keep its own id, so its deliveries never replace the
 * series' (and the invites of either read apart).
 */
export const seriesChanges: Migration = {
  name: "008_series_changes",
  async up(db) {
    await db.raw("alter table meeting_changes add column series_id varchar(64), add column series jsonb");
    await db.raw("create index meeting_changes_calendar_order on meeting_changes ((coalesce(series_id, meeting_id)), sequence)");
  },
};
