import type { Migration } from "@sched/db";

/**
 * Meetings, and one row per participant so "meetings this e-mail attends"
 * is an index scan. Participant rows copy the meeting's mode, status and
 * times so that list and busy queries never leave their index; ids use the
 * "C" collation so ordering by id is by code point and cheap.
 */
export const createMeetings: Migration = {
  name: "001_create_meetings",
  up: async (db) => {
    await db.raw(`
      create table meetings (
        id text collate "C" primary key,
        mode text not null check (mode in ('test', 'live')),
        organizer_id text not null,
        organizer_email text not null,
        title text not null,
        description text not null,
        start_time timestamptz not null,
        end_time timestamptz not null,
        duration text not null,
        participants text[] not null,
        status text not null check (status in ('draft', 'confirmed', 'cancelled')),
        sequence integer not null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      )`);
    // upcoming / past / draft lists and busy intervals: one status, a start-time range.
    await db.raw("create index meetings_organizer_status_start on meetings (mode, organizer_id, status, start_time, id)");
    // the "all" list: every status in start-time order.
    await db.raw("create index meetings_organizer_start on meetings (mode, organizer_id, start_time, id)");
    await db.raw(`
      create table meeting_participants (
        meeting_id text collate "C" not null references meetings (id) on delete cascade,
        email text not null,
        mode text not null,
        status text not null,
        start_time timestamptz not null,
        end_time timestamptz not null,
        primary key (meeting_id, email)
      )`);
    await db.raw("create index participants_email_status_start on meeting_participants (mode, email, status, start_time, meeting_id)");
    await db.raw("create index participants_email_start on meeting_participants (mode, email, start_time, meeting_id)");
  },
};
