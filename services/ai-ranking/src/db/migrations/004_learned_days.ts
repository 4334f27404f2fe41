import type { Migration } from "@sched/db";

/**
 * What relearning keeps so that a change costs what it changed rather than
 * the whole history (domain/learning.ts): the starts a change touched, per
 * person queued; each person's tally per local day; and the sum of those
 * tallies with the zone they were read on. No row in learned_totals (as for
 * everyone when this migration runs) means a full relearning next time.
 */
export const learnedDays: Migration = {
  name: "004_learned_days",
  async up(db) {
    await db.raw(`
      create table relearn_moments (
        email varchar(254) not null,
        mode varchar(8) not null,
        start_at timestamptz not null,
        primary key (email, mode, start_at)
      )`);
    await db.raw(`
      create table learned_days (
        email varchar(254) not null,
        mode varchar(8) not null,
        day integer not null,
        tally jsonb not null,
        primary key (email, mode, day)
      )`);
    await db.raw(`
      create table learned_totals (
        email varchar(254) not null,
        mode varchar(8) not null,
        zone varchar(64) not null,
        first_full_day integer not null,
        totals jsonb not null,
        primary key (email, mode)
      )`);
  },
};
