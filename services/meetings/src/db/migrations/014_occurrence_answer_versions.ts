import type { Migration } from "@sched/db";

/**
 * A series takes the next `version` (012_series_versions) whenever one of its
 * occurrences' own answers (occurrence_responses) is written, as it does for
 * its exceptions: a replica keeps those answers with the series
 * (db/seriesStore.ts), so that busy time reads no statement for them, and the
 * next request on every replica sees an answer given through any other.
 */
export const occurrenceAnswerVersions: Migration = {
  name: "014_occurrence_answer_versions",
  up: async (db) => {
    // One function for the three triggers: each names its transition table `changed` (a trigger with one takes one event).
    await db.raw(`create function occurrence_responses_touch_series() returns trigger language plpgsql as $$
      begin
        update meeting_series set version = version where id in (select distinct series_id from changed);
        return null;
      end
    $$`);
    for (const [event, rows] of [["insert", "new"], ["update", "new"], ["delete", "old"]] as const) {
      await db.raw(`create trigger occurrence_responses_${event}_version after ${event} on occurrence_responses
                      referencing ${rows} table as changed for each statement execute function occurrence_responses_touch_series()`);
    }
  },
};
