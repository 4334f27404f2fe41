import type { Migration } from "@sched/db";

/**
 * The latest change of each meeting that asked its participants again (a
 * new time): its sequence, the SEQUENCE its invites carried. A reply with a
 * lower SEQUENCE answered the time before and is not applied. One row a
 * meeting, kept at the highest such sequence.
 */
export const answerResets: Migration = {
  name: "011_answer_resets",
  async up(db) {
    await db.raw("create table answer_resets (meeting_id varchar(64) primary key, sequence integer not null)");
  },
};
