import type { Migration } from "@sched/db";

/**
 * Occurrences an attendee answered on their own in a provider's calendar
 * (an answer differing from theirs to the series was sent for the
 * occurrence's id): from then on that instance's answer is sent for the
 * occurrence whatever it is, so coming back to the series' answer is
 * recorded too. Kept here, not in a replica's memory, so a restart or
 * another replica taking the connection's turn does not forget it. Rows of
 * occurrences long past are removed by the read-back rounds.
 */
export const answeredApart: Migration = {
  name: "013_answered_apart",
  async up(db) {
    await db.raw(`create table answered_apart (
      series_id varchar(64) not null,
      original_start timestamptz not null,
      email varchar(320) not null,
      primary key (series_id, original_start, email)
    )`);
    await db.raw("create index answered_apart_original_start on answered_apart (original_start)");
  },
};
