import type { Migration } from "@sched/db";

export const createSignIn: Migration = {
  name: "001_create_sign_in",
  async up(db) {
    // Links and sessions are kept only as SHA-256 hashes of their tokens: a copy of the table signs nobody in.
    await db.raw(`
      create table sign_in_links (
        token_hash char(64) primary key,
        user_id varchar(28) not null,
        created_at timestamptz not null default clock_timestamp(),
        expires_at timestamptz not null,
        used_at timestamptz
      )`);
    await db.raw(`
      create table sessions (
        token_hash char(64) primary key,
        user_id varchar(28) not null,
        csrf_token varchar(64) not null,
        mode varchar(4) not null default 'test' check (mode in ('test', 'live')),
        created_at timestamptz not null default clock_timestamp(),
        last_seen_at timestamptz not null default clock_timestamp()
      )`);
    await db.raw("create index sessions_by_user on sessions (user_id)");
    // What the sign-in endpoints count to limit guesses and mail per address and per e-mail.
    await db.raw(`
      create table sign_in_attempts (
        at timestamptz not null default clock_timestamp(),
        address varchar(64) not null,
        email varchar(254)
      )`);
    await db.raw("create index sign_in_attempts_by_address on sign_in_attempts (address, at)");
    await db.raw("create index sign_in_attempts_by_email on sign_in_attempts (email, at) where email is not null");
  },
  async down(db) {
    await db.raw("drop table if exists sign_in_attempts");
    await db.raw("drop table if exists sessions");
    await db.raw("drop table if exists sign_in_links");
  },
};
