import type { Migration } from "@sched/db";

export const createRequestLog: Migration = {
  name: "002_create_request_log",
  async up(db) {
    // Metadata of each authenticated request the gateways answered; never a body, never a key. Kept 7 days.
    await db.raw(`
      create table request_log (
        at timestamptz not null,
        request_id varchar(128) not null,
        api_key_id varchar(28) not null,
        user_id varchar(28) not null,
        mode varchar(4) not null check (mode in ('test', 'live')),
        method varchar(16) not null,
        path varchar(200) not null,
        status smallint not null,
        duration_ms integer not null
      )`);
    await db.raw("create index request_log_by_user on request_log (user_id, mode, at desc)");
    await db.raw("create index request_log_by_time on request_log (at)");
    // A batch delivered twice (the stream redelivers on a lost ack) is stored once.
    await db.raw("create table request_log_batches (batch_id varchar(64) primary key, stored_at timestamptz not null default clock_timestamp())");
  },
  async down(db) {
    await db.raw("drop table if exists request_log_batches");
    await db.raw("drop table if exists request_log");
  },
};
