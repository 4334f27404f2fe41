import type { Migration } from "@sched/db";

export const createApiKeys: Migration = {
  name: "002_create_api_keys",
  async up(db) {
    // Only the SHA-256 of a key is kept; the key itself is shown once, at creation.
    // The rate_limit_* columns override the deployment's per-minute limits for one key (null: the default).
    await db.raw(`
      create table api_keys (
        id varchar(28) primary key,
        user_id varchar(28) not null references users (id),
        key_hash char(64) not null check (key_hash ~ '^[0-9a-f]{64}$'),
        hint varchar(32) not null,
        mode varchar(4) not null check (mode in ('test', 'live')),
        scopes jsonb not null check (jsonb_typeof(scopes) = 'array'),
        name varchar(200),
        rate_limit_standard integer check (rate_limit_standard > 0),
        rate_limit_ai integer check (rate_limit_ai > 0),
        created_at timestamptz not null default clock_timestamp(),
        revoked_at timestamptz,
        constraint api_keys_key_hash_key unique (key_hash)
      )`);
    await db.raw("create index api_keys_by_user on api_keys (user_id, created_at)");
  },
  async down(db) {
    await db.raw("drop table if exists api_keys");
  },
};
