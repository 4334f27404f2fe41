import type { Migration } from "@sched/db";

// Frozen with the migration, like the working-hours default: nothing stated.
const NO_PREFERENCES = JSON.stringify({ preferredTimes: [], avoidDays: [], bufferMinutes: null, maxMeetingsPerDay: null });

export const addPreferences: Migration = {
  name: "003_add_preferences",
  async up(db) {
    await db.raw(
      `alter table users add column preferences jsonb not null default '${NO_PREFERENCES}'::jsonb check (jsonb_typeof(preferences) = 'object')`,
    );
  },
  async down(db) {
    await db.raw("alter table users drop column if exists preferences");
  },
};
