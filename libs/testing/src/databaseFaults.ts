import type { Knex } from "@sched/db";

/**
 * Makes the schema of `db` refuse the first update of `table` for which
 * `when` holds (a trigger condition over `old` and `new`), as a restarting
 * database would, and counts the tries. Returns how many statements tried
 * (the refused one included) and the undo.
 */
export async function refuseFirstUpdate(db: Knex, table: string, when: string): Promise<{ tries: () => Promise<number>; undo: () => Promise<void> }> {
  await db.raw("create sequence refusals");
  await db.raw(`create function refuse_first_update() returns trigger language plpgsql as $$
    begin
      if nextval('refusals') = 1 then raise exception 'the database system is shutting down' using errcode = '57P03'; end if;
      return new;
    end $$`);
  await db.raw(`create trigger refuse_first_update before update on ${table} for each row when (${when}) execute function refuse_first_update()`);
  return {
    tries: async () => Number((await db.raw("select last_value from refusals")).rows[0].last_value),
    undo: async () => {
      await db.raw(`drop trigger refuse_first_update on ${table}`);
      await db.raw("drop function refuse_first_update");
      await db.raw("drop sequence refusals");
    },
  };
}
