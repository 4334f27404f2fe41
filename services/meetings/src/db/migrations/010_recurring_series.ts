import type { Migration } from "@sched/db";

/**
 * Recurring meetings (api-decisions part 15). A series is one row: its rule,
 * the organizer's zone it is expanded in, and `last_end`, the end of its last
 * occurrence, so "series that may have occurrences in this window" is an
 * index range. Occurrences are never stored as such: lists and busy time
 * expand each series over the window asked for. An exception (one
 * occurrence changed or cancelled, or kept as it was when the series
 * changed after it ended) is a row of its own, read by its series and its
 * actual time. `active_from`: occurrences of the rule that end by then are
 * not generated any more (they are kept as exceptions).
 *
 * List items of single meetings gain the series fields (null), so every list
 * item has the same shape.
 */
export const recurringSeries: Migration = {
  name: "010_recurring_series",
  up: async (db) => {
    await db.raw(`
      create table meeting_series (
        id text collate "C" primary key,
        mode text not null check (mode in ('test', 'live')),
        organizer_id text not null,
        organizer_email text not null,
        title text not null,
        description text not null,
        start_time timestamptz not null,
        duration text not null,
        participants text[] not null,
        status text not null check (status in ('draft', 'confirmed', 'cancelled')),
        sequence integer not null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        recurrence text not null,
        time_zone text not null,
        last_end timestamptz not null,
        active_from timestamptz
      )`);
    await db.raw("create index meeting_series_organizer_end on meeting_series (mode, organizer_id, last_end) include (start_time)");
    await db.raw(`
      create table series_participants (
        series_id text collate "C" not null references meeting_series (id) on delete cascade,
        email text not null,
        mode text not null,
        last_end timestamptz not null,
        primary key (series_id, email)
      )`);
    await db.raw("create index series_participants_email_end on series_participants (mode, email, last_end) include (series_id)");
    await db.raw(`
      create table meeting_exceptions (
        series_id text collate "C" not null references meeting_series (id) on delete cascade,
        original_start timestamptz not null,
        title text not null,
        description text not null,
        start_time timestamptz not null,
        end_time timestamptz not null,
        duration text not null,
        participants text[] not null,
        status text not null check (status in ('draft', 'confirmed', 'cancelled')),
        sequence integer not null,
        primary key (series_id, original_start)
      )`);
    await db.raw("create index meeting_exceptions_series_start on meeting_exceptions (series_id, start_time)");
    await db.raw(`create or replace function list_item_of_meeting() returns trigger language plpgsql as $$
      begin
        new.list_item := '{"id":"' || new.id || '","title":' || to_json(new.title)
          || ',"startTime":"' || to_char(new.start_time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
          || '","duration":"' || new.duration || '","participants":' || to_json(new.participants)
          || ',"status":"' || new.status || '","organizer":' || to_json(new.organizer_email)
          || ',"recurrence":null,"seriesId":null,"originalStartTime":null}';
        return new;
      end
    $$`);
    await db.raw("update meetings set list_item = ''");
  },
};
