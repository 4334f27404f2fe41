import type { Migration } from "@sched/db";

/**
 * The push channel of each Google or Microsoft connection: Google's watch
 * channel or Graph's subscription (`channel_id`), the hash of the secret
 * the provider sends back with each notification, when the provider lets
 * it lapse, and when a replica next looks at it (taken as answer_poll_turns
 * are, so one replica opens or renews a connection's channel).
 */
export const answerWatches: Migration = {
  name: "014_answer_watches",
  async up(db) {
    await db.raw(`create table answer_watches (
      connection_id varchar(28) primary key,
      provider text not null,
      channel_id text unique,
      resource_id text,
      secret_hash text,
      expires_at timestamptz,
      next_check_at timestamptz not null
    )`);
  },
};
