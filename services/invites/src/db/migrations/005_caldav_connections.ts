import type { Migration } from "@sched/db";

/**
 * CalDAV connections beside Google's: the server's address (the username
 * and app password are sealed with the OAuth tokens' key), which connection
 * is the default for invites, and which calendars count as busy time (null:
 * the provider's default). Invites can go through CalDAV too.
 */
export const caldavConnections: Migration = {
  name: "005_caldav_connections",
  async up(db) {
    await db.raw("alter table calendar_connections drop constraint calendar_connections_provider_check");
    await db.raw("alter table calendar_connections add constraint calendar_connections_provider_check check (provider in ('google', 'caldav'))");
    await db.raw(`alter table calendar_connections
      add column server_url varchar(2000),
      add column is_default boolean not null default false,
      add column busy_calendars text[]`);
    await db.raw("create unique index calendar_connections_one_default on calendar_connections (user_id) where is_default");
    await db.raw("alter table deliveries drop constraint deliveries_channel_check");
    await db.raw("alter table deliveries add constraint deliveries_channel_check check (channel in ('google', 'caldav', 'email'))");
  },
};
