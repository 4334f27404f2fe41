import type { Migration } from "@sched/db";

/**
 * How far each event consumer (by durable name) has recorded its stream:
 * the stream sequence of the last event it recorded. Replicas share one
 * durable, and JetStream may hand one replica later events while another
 * still records earlier ones: a batch is recorded only right after this
 * position, with its row locked, so recording follows stream order.
 */
export const consumerPositions: Migration = {
  name: "007_consumer_positions",
  async up(db) {
    await db.raw("create table consumer_positions (consumer varchar(100) primary key, recorded_through bigint not null)");
  },
  async down(db) {
    await db.raw("drop table consumer_positions");
  },
};
