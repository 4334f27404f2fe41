import type { Migration } from "@sched/db";

/**
 * Microsoft 365 / Outlook.com connections (Microsoft Graph) beside Google's
 * and CalDAV's, and invites that go through them. A consent in progress
 * names its provider, so one provider's redirect cannot complete another's.
 */
export const microsoftConnections: Migration = {
  name: "007_microsoft_connections",
  async up(db) {
    await db.raw("alter table calendar_connections drop constraint calendar_connections_provider_check");
    await db.raw("alter table calendar_connections add constraint calendar_connections_provider_check check (provider in ('google', 'microsoft', 'caldav'))");
    await db.raw("alter table oauth_states add column provider varchar(20) not null default 'google'");
    await db.raw("alter table deliveries drop constraint deliveries_channel_check");
    await db.raw("alter table deliveries alter column channel type varchar(16)");
    await db.raw("alter table deliveries add constraint deliveries_channel_check check (channel in ('google', 'microsoft', 'caldav', 'email'))");
  },
};
