import type { Migration } from "@sched/db";

/**
 * When each connection's answers are next due to be read back: the replica
 * that moves it on polls that connection this round, and the others,
 * finding it not yet due, leave it. So a connection is read once a round
 * however many replicas run.
 */
export const answerPollTurns: Migration = {
  name: "012_answer_poll_turns",
  async up(db) {
    await db.raw("create table answer_poll_turns (connection_id varchar(28) primary key, next_poll_at timestamptz not null)");
  },
};
