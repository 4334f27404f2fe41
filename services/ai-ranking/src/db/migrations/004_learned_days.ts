import type { Migration } from "@sched/db";

/**
 * What relearning keeps so that a change costs what it changed rather than
 * the whole history (domain/learning.ts): each attendance row's start; the starts a change touched, per
 * person queued; each person's tally per local day; and the sum of those
 * tallies with the zone they were read on. No row in learned_totals (as for
 * everyone when this migration runs) means a full relearning next time.
 */
export const learnedDays: Migration = {
  name: "004_learned_days",
  async up(db) {
    // Each attendance row carries its meeting's start, so a person's meetings of some days are found by index without reading their history.
    await db.raw("alter table attendance add column start_at timestamptz");
    await db.raw("update attendance a set start_at = m.start_at from meetings m where m.meeting_id = a.meeting_id");
    await db.raw("alter table attendance alter column start_at set not null");
    await db.raw("create index attendance_by_start on attendance (email, mode, start_at)");
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
