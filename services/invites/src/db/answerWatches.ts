import type { Knex } from "@sched/db";

/** A connection's push channel as stored: absent fields while none was opened yet. */
export interface AnswerWatch {
  connectionId: string;
  channelId: string | null;
  resourceId: string | null;
  expiresAt: Date | null;
}

interface WatchRow {
  connection_id: string;
  channel_id: string | null;
  resource_id: string | null;
  expires_at: Date | string | null;
}

const toWatch = (row: WatchRow): AnswerWatch => ({
  connectionId: row.connection_id,
  channelId: row.channel_id,
  resourceId: row.resource_id,
  expiresAt: row.expires_at === null ? null : new Date(row.expires_at),
});

/**
 * Takes this replica's turn at the channels of the connections given (due
 * when never looked at, or `checkMs` ago), moving each on; one statement,
 * so of replicas checking together one takes each connection (as
 * claimPollTurns).
 */
export async function claimWatchChecks(db: Knex, provider: "google" | "microsoft", connectionIds: readonly string[], checkMs: number): Promise<AnswerWatch[]> {
  if (connectionIds.length === 0) return [];
  const result = await db.raw(
    `insert into answer_watches (connection_id, provider, next_check_at)
     select id, ?, clock_timestamp() + ?::int * interval '1 millisecond' from jsonb_array_elements_text(?::jsonb) as id
     on conflict (connection_id) do update set next_check_at = excluded.next_check_at
      where answer_watches.next_check_at <= clock_timestamp()
     returning connection_id, channel_id, resource_id, expires_at`,
    [provider, checkMs, JSON.stringify([...new Set(connectionIds)])],
  );
  return (result.rows as WatchRow[]).map(toWatch);
}

/** The channel the provider opened for the connection, its secret kept only as a hash. */
export async function saveWatch(db: Knex, connectionId: string, channel: { channelId: string; resourceId: string | null; secretHash: string; expiresAt: Date }): Promise<void> {
  await db("answer_watches")
    .where({ connection_id: connectionId })
    .update({ channel_id: channel.channelId, resource_id: channel.resourceId, secret_hash: channel.secretHash, expires_at: channel.expiresAt });
}

/** A renewed channel's new lapse. */
export async function extendWatch(db: Knex, connectionId: string, expiresAt: Date): Promise<void> {
  await db("answer_watches").where({ connection_id: connectionId }).update({ expires_at: expiresAt });
}

/** Whose channel a notification names, with the hash its secret must match; undefined for a channel unknown or lapsed. */
export async function watchOfChannel(db: Knex, provider: "google" | "microsoft", channelId: string): Promise<{ connectionId: string; secretHash: string } | undefined> {
  const row = (await db("answer_watches")
    .where({ provider, channel_id: channelId })
    .andWhere("expires_at", ">", db.fn.now())
    .first("connection_id", "secret_hash")) as { connection_id: string; secret_hash: string | null } | undefined;
  return row?.secret_hash ? { connectionId: row.connection_id, secretHash: row.secret_hash } : undefined;
}

/** Of the connections given, those whose channel is live: their answers arrive by push, and polling slows down. */
export async function watchedConnections(db: Knex, connectionIds: readonly string[]): Promise<Set<string>> {
  if (connectionIds.length === 0) return new Set();
  const rows = (await db("answer_watches").whereIn("connection_id", connectionIds).andWhere("expires_at", ">", db.fn.now()).select("connection_id")) as Array<{ connection_id: string }>;
  return new Set(rows.map((r) => r.connection_id));
}

/** Forgets the connection's channel, giving back what the provider needs to stop it. */
export async function takeWatch(db: Knex, connectionId: string): Promise<AnswerWatch | undefined> {
  const rows = (await db("answer_watches").where({ connection_id: connectionId }).delete().returning(["connection_id", "channel_id", "resource_id", "expires_at"])) as WatchRow[];
  return rows[0] ? toWatch(rows[0]) : undefined;
}

/** Channels of connections removed or replaced (a new consent makes a new id): nothing is read for them, and the provider lets them lapse. */
export async function forgetOrphanWatches(db: Knex): Promise<void> {
  await db.raw("delete from answer_watches w where not exists (select 1 from calendar_connections c where c.id = w.connection_id and c.status = 'active')");
}

/** A notification said the connection's calendar changed: its answers are due now, to whichever replica's round takes them first. */
export async function answersDueNow(db: Knex, connectionId: string): Promise<void> {
  await db.raw(
    `insert into answer_poll_turns (connection_id, next_poll_at) values (?, clock_timestamp())
     on conflict (connection_id) do update set next_poll_at = least(answer_poll_turns.next_poll_at, excluded.next_poll_at)`,
    [connectionId],
  );
}
