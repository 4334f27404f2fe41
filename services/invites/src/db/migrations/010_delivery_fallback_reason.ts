import type { Migration } from "@sched/db";

/**
 * Why a delivery went by e-mail when the organizer's calendar was chosen to
 * carry it and said it could not (a recurrence rule Microsoft Graph cannot
 * say): kept with the delivery, so an operator reading the ledger sees why.
 */
export const deliveryFallbackReason: Migration = {
  name: "010_delivery_fallback_reason",
  async up(db) {
    await db.raw("alter table deliveries add column fallback_reason text");
  },
};
