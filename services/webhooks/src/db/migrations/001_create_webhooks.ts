import type { Migration } from "@sched/db";

export const createWebhooks: Migration = {
  name: "001_create_webhooks",
  async up(db) {
    // One row a public event. `seq` is the order of recording (a meeting's events are recorded
    // in their order), so it orders lists and a meeting's deliveries; `source_event_id` makes a
    // redelivered meeting event record nothing again. The body is json, not jsonb: kept as
    // written, so deliveries and the list show fields in the order GET does.
    await db.raw(`
      create table events (
        seq bigserial primary key,
        id varchar(28) not null unique,
        source_event_id varchar(64) not null unique,
        user_id varchar(64) not null,
        mode varchar(4) not null check (mode in ('test', 'live')),
        type varchar(32) not null,
        meeting_id varchar(64) not null,
        body json not null,
        created_at timestamptz not null
      )`);
    await db.raw("create index events_by_user on events (user_id, mode, seq desc)");
    await db.raw("create index events_by_meeting on events (meeting_id, seq desc)");
    // Signing secrets sealed with AES-256-GCM, never stored in clear; the rolled one until it expires.
    await db.raw(`
      create table endpoints (
        id varchar(28) primary key,
        user_id varchar(64) not null,
        mode varchar(4) not null check (mode in ('test', 'live')),
        url text not null,
        events jsonb not null check (jsonb_typeof(events) = 'array'),
        description text not null,
        enabled boolean not null,
        sealed_secret text not null,
        sealed_previous_secret text,
        previous_secret_expires_at timestamptz,
        last_success_at timestamptz,
        created_at timestamptz not null default clock_timestamp()
      )`);
    await db.raw("create index endpoints_by_user on endpoints (user_id, mode, created_at desc)");
    // One row an event owes one endpoint: the worker's unit of work, with its retry schedule and lease.
    await db.raw(`
      create table deliveries (
        seq bigserial primary key,
        id varchar(28) not null unique,
        endpoint_id varchar(28) not null references endpoints (id) on delete cascade,
        event_seq bigint not null references events (seq) on delete cascade,
        meeting_id varchar(64) not null,
        state varchar(10) not null check (state in ('pending', 'delivered', 'failed')),
        attempts integer not null default 0,
        next_attempt_at timestamptz not null default clock_timestamp(),
        lease_until timestamptz,
        created_at timestamptz not null default clock_timestamp()
      )`);
    await db.raw("create index deliveries_due on deliveries (next_attempt_at) where state = 'pending'");
    await db.raw("create index deliveries_in_order on deliveries (endpoint_id, meeting_id, event_seq) where state = 'pending'");
    await db.raw("create index deliveries_by_endpoint on deliveries (endpoint_id, seq desc)");
    // What each attempt got: the status, or why none came; never the receiver's body.
    await db.raw(`
      create table delivery_attempts (
        delivery_seq bigint not null references deliveries (seq) on delete cascade,
        attempt integer not null,
        at timestamptz not null,
        status integer,
        error text,
        duration_ms integer not null,
        primary key (delivery_seq, attempt)
      )`);
  },
  async down(db) {
    for (const table of ["delivery_attempts", "deliveries", "endpoints", "events"]) await db.raw(`drop table if exists ${table}`);
  },
};
