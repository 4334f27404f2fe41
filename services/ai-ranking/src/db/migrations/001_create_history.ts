import type { Migration } from "@sched/db";

export const createHistory: Migration = {
  name: "001_create_history",
  async up(db) {
    // A copy of what accounts says about each user: e-mail (to match meeting
    // participants), name (for reasons), zone and stated preferences.
    await db.raw(`
      create table people (
        user_id varchar(64) primary key,
        email varchar(254) not null,
        name varchar(200) not null,
        timezone varchar(64) not null,
        preferences jsonb,
        updated_at timestamptz not null
      )`);
    await db.raw("create index people_by_email on people (email)");
    // The latest version of each meeting (by its sequence); no title or description is kept.
    await db.raw(`
      create table meetings (
        meeting_id varchar(64) primary key,
        mode varchar(4) not null check (mode in ('test', 'live')),
        sequence integer not null,
        confirmed boolean not null,
        start_at timestamptz not null,
        end_at timestamptz not null,
        scheduled_at timestamptz not null
      )`);
    // Who a meeting belongs to: organizer and participants, by e-mail.
    await db.raw(`
      create table attendance (
        email varchar(254) not null,
        mode varchar(4) not null,
        meeting_id varchar(64) not null references meetings (meeting_id) on delete cascade,
        primary key (email, mode, meeting_id)
      )`);
    await db.raw("create index attendance_by_meeting on attendance (meeting_id)");
    // What each user's history says, per mode, recomputed when it changes.
    await db.raw(`
      create table patterns (
        user_id varchar(64) not null,
        mode varchar(4) not null,
        patterns jsonb not null,
        learned_at timestamptz not null default clock_timestamp(),
        primary key (user_id, mode)
      )`);
    // Which generation of the history consumer feeds the tables; a rebuild starts a new one.
    await db.raw("create table history_state (id smallint primary key check (id = 1), generation integer not null)");
    await db.raw("insert into history_state (id, generation) values (1, 1)");
  },
  async down(db) {
    for (const table of ["history_state", "patterns", "attendance", "meetings", "people"]) await db.raw(`drop table if exists ${table}`);
  },
};
