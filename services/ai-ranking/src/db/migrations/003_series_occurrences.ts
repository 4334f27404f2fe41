import type { Migration } from "@sched/db";

/**
 * A recurring meeting is kept as its occurrences, each a meeting row under
 * its occurrence id; `series_id` names the series it came from, so a new
 * rule or time finds the occurrences it no longer has.
 */
export const seriesOccurrences: Migration = {
  name: "003_series_occurrences",
  async up(db) {
    await db.raw("alter table meetings add column series_id varchar(64)");
    await db.raw("create index meetings_by_series on meetings (series_id) where series_id is not null");
  },
};
