import type { Migration } from "@sched/db";

/**
 * Time off: busy time of one user that no meeting holds. The busy query
 * reads a user's entries by (mode, user_id) and keeps those overlapping its
 * range; a user keeps at most a few hundred, so the index's end-time order
 * only narrows the walk. The list reads them in start order.
 */
export const createTimeOff: Migration = {
  name: "008_create_time_off",
  up: async (db) => {
    await db.raw(`
      create table time_off (
        id text collate "C" primary key,
        mode text not null check (mode in ('test', 'live')),
        user_id text not null,
        start_time timestamptz not null,
        end_time timestamptz not null check (end_time > start_time),
        reason text not null,
        created_at timestamptz not null
      )`);
    await db.raw("create index time_off_user_end on time_off (mode, user_id, end_time) include (start_time)");
    await db.raw("create index time_off_user_start on time_off (mode, user_id, start_time, id)");
  },
};
