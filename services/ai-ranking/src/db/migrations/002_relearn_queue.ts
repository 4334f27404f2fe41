import type { Migration } from "@sched/db";

/**
 * The people whose patterns a change made stale, one row per person and
 * mode however many changes touched them, written in the transaction that
 * stores the change and taken by the relearning worker.
 */
export const createRelearnQueue: Migration = {
  name: "002_relearn_queue",
  async up(db) {
    await db.raw(`
      create table relearn_queue (
        email varchar(254) not null,
        mode varchar(8) not null,
        queued_at timestamptz not null default now(),
        primary key (email, mode)
      )`);
  },
};
