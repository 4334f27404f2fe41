import type { Migration } from "@sched/db";

/**
 * The status indexes carry end_time as well: the upcoming and past lists and
 * the busy query filter on it, and with it in the index they are index-only
 * scans, never visiting the table for rows the filter then drops. They replace
 * the indexes of 001 with the same keys.
 */
export const coverEndTime: Migration = {
  name: "005_cover_end_time",
  up: async (db) => {
    await db.raw("create index meetings_organizer_status_start_end on meetings (mode, organizer_id, status, start_time, id) include (end_time)");
    await db.raw("drop index meetings_organizer_status_start");
    await db.raw("create index participants_email_status_start_end on meeting_participants (mode, email, status, start_time, meeting_id) include (end_time)");
    await db.raw("drop index participants_email_status_start");
  },
};
