import type { Knex } from "@sched/db";

/**
 * Takes this replica's turn at the connections that are due (never polled,
 * or last polled an interval ago), moving each on by `everyMs`; returns
 * those taken. One statement: of replicas claiming together, the row lock
 * of the upsert lets one move a connection on, and the others then find it
 * not due, so each connection is taken by one replica a round.
 */
export async function claimPollTurns(db: Knex, connectionIds: readonly string[], everyMs: number): Promise<Set<string>> {
  if (connectionIds.length === 0) return new Set();
  const result = await db.raw(
    `insert into answer_poll_turns (connection_id, next_poll_at)
     select id, clock_timestamp() + ?::int * interval '1 millisecond' from jsonb_array_elements_text(?::jsonb) as id
     on conflict (connection_id) do update set next_poll_at = excluded.next_poll_at
      where answer_poll_turns.next_poll_at <= clock_timestamp()
     returning connection_id`,
    [everyMs, JSON.stringify([...new Set(connectionIds)])],
  );
  return new Set((result.rows as Array<{ connection_id: string }>).map((r) => r.connection_id));
}
