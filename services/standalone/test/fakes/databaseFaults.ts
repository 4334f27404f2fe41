import type { Knex } from "@sched/db";

/**
 * Makes the invites schema refuse the first statement that records a
 * delivery as sent, as a restarting database would, and counts the tries.
 * Returns how many statements tried (the refused one included) and the undo.
 */
export async function refuseFirstSentRecord(db: Knex): Promise<{ tries: () => Promise<number>; undo: () => Promise<void> }> {
  await db.raw("create sequence refusals");
  await db.raw(`create function refuse_first_sent() returns trigger language plpgsql as $$
    begin
      if nextval('refusals') = 1 then raise exception 'the database system is shutting down' using errcode = '57P03'; end if;
      return new;
    end $$`);
  await db.raw("create trigger refuse_first_sent before update on deliveries for each row when (new.state = 'sent' and old.state = 'pending') execute function refuse_first_sent()");
  return {
    tries: async () => Number((await db.raw("select last_value from refusals")).rows[0].last_value),
    undo: async () => {
      await db.raw("drop trigger refuse_first_sent on deliveries");
      await db.raw("drop function refuse_first_sent");
      await db.raw("drop sequence refusals");
    },
  };
}
