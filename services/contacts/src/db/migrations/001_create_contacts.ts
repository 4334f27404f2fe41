import type { Migration } from "@sched/db";

export const createContacts: Migration = {
  name: "001_create_contacts",
  async up(db) {
    await db.raw(`
      create table contacts (
        id varchar(28) primary key,
        owner_user_id varchar(64) not null,
        mode varchar(4) not null check (mode in ('test', 'live')),
        email varchar(254) not null check (email = lower(trim(email))),
        name text,
        relationship varchar(16) not null check (relationship in ('colleague', 'client', 'friend', 'other')),
        blocked boolean not null default false,
        added_at timestamptz not null default clock_timestamp(),
        constraint contacts_owner_mode_email_key unique (owner_user_id, mode, email)
      )`);
    // The list: one owner and mode, most recently added first, ties by id the same way.
    await db.raw("create index contacts_list_order on contacts (owner_user_id, mode, added_at desc, id desc)");
    // By e-mail: who lists this person (the other side of visibility) and the name fill.
    await db.raw("create index contacts_by_email on contacts (email, mode, owner_user_id)");
  },
  async down(db) {
    await db.raw("drop table if exists contacts");
  },
};
