import type { Migration } from "@sched/db";

// Frozen with the migration: later changes to the domain default must not rewrite history.
const DEFAULT_WORKING_HOURS = JSON.stringify(
  ["monday", "tuesday", "wednesday", "thursday", "friday"].map((day) => ({ day, start: "09:00", end: "17:00" })),
);

export const createUsers: Migration = {
  name: "001_create_users",
  async up(db) {
    await db.raw(`
      create table users (
        id varchar(28) primary key,
        email varchar(254) not null check (email = lower(trim(email))),
        name varchar(200) not null,
        timezone varchar(64) not null default 'UTC',
        working_hours jsonb not null default '${DEFAULT_WORKING_HOURS}'::jsonb check (jsonb_typeof(working_hours) = 'array'),
        created_at timestamptz not null default clock_timestamp(),
        updated_at timestamptz not null default clock_timestamp(),
        constraint users_email_key unique (email)
      )`);
  },
  async down(db) {
    await db.raw("drop table if exists users");
  },
};
