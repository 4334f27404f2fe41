import type { Migration } from "@sched/db";

export const createInvites: Migration = {
  name: "001_create_invites",
  async up(db) {
    // One provider grant per user and provider; tokens sealed with AES-256-GCM (never stored in clear).
    await db.raw(`
      create table calendar_connections (
        id varchar(28) primary key,
        user_id varchar(64) not null,
        provider varchar(16) not null check (provider in ('google')),
        account_email varchar(254),
        sealed_tokens text not null,
        status varchar(8) not null check (status in ('active', 'broken')),
        created_at timestamptz not null default clock_timestamp(),
        updated_at timestamptz not null default clock_timestamp(),
        constraint calendar_connections_user_provider_key unique (user_id, provider)
      )`);
    // Consent in progress: only a hash of the state is kept, so a database leak cannot finish someone's consent.
    await db.raw(`
      create table oauth_states (
        state_hash char(64) primary key,
        user_id varchar(64) not null,
        expires_at timestamptz not null
      )`);
    // One row a meeting change: the unit of work of the delivery worker, with its retry schedule.
    await db.raw(`
      create table meeting_changes (
        meeting_id varchar(64) not null,
        sequence integer not null,
        mode varchar(4) not null check (mode in ('test', 'live')),
        organizer_user_id varchar(64) not null,
        organizer_email varchar(254) not null,
        meeting jsonb not null,
        state varchar(8) not null check (state in ('pending', 'done', 'failed')),
        attempts integer not null default 0,
        next_attempt_at timestamptz not null default clock_timestamp(),
        lease_until timestamptz,
        last_error text,
        created_at timestamptz not null default clock_timestamp(),
        primary key (meeting_id, sequence)
      )`);
    await db.raw("create index meeting_changes_due on meeting_changes (next_attempt_at) where state = 'pending'");
    // The exactly-once ledger: a redelivered event finds its rows and sends nothing again.
    await db.raw(`
      create table deliveries (
        meeting_id varchar(64) not null,
        sequence integer not null,
        email varchar(254) not null,
        kind varchar(8) not null check (kind in ('request', 'cancel')),
        channel varchar(8) not null check (channel in ('google', 'email')),
        state varchar(10) not null check (state in ('pending', 'sent', 'simulated', 'failed')),
        attempts integer not null default 0,
        last_error text,
        updated_at timestamptz not null default clock_timestamp(),
        primary key (meeting_id, sequence, email, kind)
      )`);
    // The provider's copy of a meeting, so that updates patch the same event.
    await db.raw(`
      create table provider_events (
        meeting_id varchar(64) primary key,
        connection_id varchar(28) not null,
        provider_event_id varchar(1024) not null,
        updated_at timestamptz not null default clock_timestamp()
      )`);
  },
  async down(db) {
    for (const table of ["provider_events", "deliveries", "meeting_changes", "oauth_states", "calendar_connections"]) {
      await db.raw(`drop table if exists ${table}`);
    }
  },
};
