import type { Knex } from "knex";
import type { Migration } from "../index.js";

/**
 * The migration that creates the `idempotency_keys` table in the calling
 * service's schema; `name` places it in that service's own migration order.
 * A request claims its key by inserting the row (state in_progress) before
 * it does anything, and stores its response in the same transaction as its
 * change (state done).
 */
export function idempotencyKeysMigration(name: string): Migration {
  return {
    name,
    up: async (db: Knex) => {
      await db.raw(`
        create table idempotency_keys (
          api_key_id text not null,
          idem_key text not null,
          fingerprint text not null,
          claim_token text not null,
          state text not null check (state in ('in_progress', 'done')),
          response_status integer,
          response_body jsonb,
          claimed_at timestamptz not null,
          expires_at timestamptz not null,
          primary key (api_key_id, idem_key)
        )`);
      await db.raw("create index idempotency_keys_expiry on idempotency_keys (expires_at)");
    },
  };
}
