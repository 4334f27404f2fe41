import type { Knex, Migration } from "@sched/db";

/**
 * The migration that creates the `outbox` table in the calling service's
 * schema. `name` places it in that service's own migration order.
 */
export function outboxMigration(name: string): Migration {
  return {
    name,
    up: async (db: Knex) => {
      await db.raw(`
        create table outbox (
          id bigserial primary key,
          subject text not null,
          payload jsonb not null,
          msg_id text not null,
          created_at timestamptz not null default now(),
          published_at timestamptz,
          trace_context jsonb,
          constraint outbox_msg_id_unique unique (msg_id)
        )`);
      // The relay only ever looks for what is left to publish, in id order.
      await db.raw("create index outbox_unpublished on outbox (id) where published_at is null");
    },
    down: async (db: Knex) => {
      await db.raw("drop table if exists outbox");
    },
  };
}

/**
 * Adds `trace_context` to an outbox created before it existed (the event's
 * place in the trace of the request that caused it). Idempotent, so a schema
 * whose outbox already has the column takes it as done.
 */
export function outboxTraceContextMigration(name: string): Migration {
  return {
    name,
    up: async (db: Knex) => {
      await db.raw("alter table outbox add column if not exists trace_context jsonb");
    },
    down: async (db: Knex) => {
      await db.raw("alter table outbox drop column if exists trace_context");
    },
  };
}
