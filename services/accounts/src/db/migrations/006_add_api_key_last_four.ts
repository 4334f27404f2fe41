import type { Migration } from "@sched/db";

export const addApiKeyLastFour: Migration = {
  name: "006_add_api_key_last_four",
  async up(db) {
    // The dashboard shows a key as `sk_test_…abcd`; keys made before this column keep their older hint.
    await db.raw("alter table api_keys add column last_four varchar(4) check (last_four ~ '^[0-9A-Za-z]{4}$')");
  },
  async down(db) {
    await db.raw("alter table api_keys drop column if exists last_four");
  },
};
