import type { Migration } from "@sched/db";

/**
 * Leaves a fifth of each page of deliveries free: claiming sets only the
 * lease, no indexed column, so with room on the page Postgres updates the
 * row in place (a HOT update) instead of adding an entry to each of its
 * five indexes, once for every delivery.
 */
export const deliveriesRoomToLease: Migration = {
  name: "002_deliveries_room_to_lease",
  async up(db) {
    await db.raw("alter table deliveries set (fillfactor = 80)");
  },
  async down(db) {
    await db.raw("alter table deliveries reset (fillfactor)");
  },
};
