import { PublishOrderError, type Bus, type PublishOptions } from "@sched/bus";
import { holdConnection, isEmbedded, type Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import type { EventDef } from "@sched/proto";
import { observeOutboxLag, withTraceContext, type TraceCarrier } from "@sched/telemetry";

export interface OutboxRelayOptions {
  db: Knex;
  bus: Bus;
  logger: Logger;
  /** The events this service writes; a row is published with the def of its subject. */
  events: readonly EventDef[];
  /** Poll interval, for rows committed without a wake() (e.g. by another replica before it died). */
  pollMs?: number;
  /**
   * Every write of this service is followed by a wake(): the poll then only
   * finds rows of a replica that died before its relay ran, so each poll that
   * held the lock and found nothing doubles the next pause, up to
   * WOKEN_IDLE_POLL_MS (an idle process is not woken every pollMs by its own
   * relay; such a dead replica's rows wait up to that long). A wake, a row, a
   * failure or another replica holding the lock bring it back to pollMs.
   * Without it the poll stays at pollMs.
   */
  wokenByEveryWrite?: boolean;
  /** Rows per transaction: small, so a lock is never held for long. */
  batchSize?: number;
  /** How long published rows are kept before they are deleted. */
  retainPublishedMs?: number;
}

export interface OutboxRelay {
  /** Publishes what was just committed now, rather than at the next poll. */
  wake(): void;
  /** Finishes the batch in flight and stops; unpublished rows stay for the next start. */
  stop(): Promise<void>;
}

interface OutboxRow {
  /** A bigserial: its digits as text (pg), or a number (embedded). */
  id: string | number | bigint;
  subject: string;
  /** The payload: on Postgres its JSON text as stored (published as it is), embedded the value. */
  payload: unknown;
  msg_id: string;
  trace_context: TraceCarrier | null;
  /** Seconds since the row was written, by the database's clock. */
  age_seconds: number;
}

/** Postgres's type id of jsonb. */
const JSONB_OID = 3802;
const jsonText = (text: string): string => text;

/** A string as an SQL literal. */
const sqlText = (text: string): string => `'${text.replaceAll("'", "''")}'`;

/** A row id as written in a statement: digits only, or the row is not one of the outbox's. */
function digits(id: string | number | bigint): string {
  const text = String(id);
  if (!/^\d+$/.test(text)) throw new Error(`not an outbox row id: ${text}`);
  return text;
}

/** A row of the lock-and-claim statement: the lock's outcome, and a claimed row when there is one. */
type LockedClaim = { locked: boolean; schema: string } & ({ [K in keyof OutboxRow]: OutboxRow[K] } | { [K in keyof OutboxRow]: null });

interface BatchResult {
  /** Whether more rows may be waiting right now. */
  more: boolean;
  /** Rows this batch claimed (none when another replica held the lock). */
  claimed?: number;
  failure?: unknown;
  /** Whether this relay held the lock, and so knows the lag. */
  locked: boolean;
  /** Age of the oldest row left unpublished, when one is. */
  oldestLeftSeconds?: number;
}

const CLEANUP_EVERY_MS = 60_000;
/** The longest idle pause of a relay woken by every write (see wokenByEveryWrite). */
const WOKEN_IDLE_POLL_MS = 8_000;

/**
 * The pause before the next poll after `emptyPolls` polls in a row that
 * found nothing: pollMs after the first (a wake's batch, or rows, came just
 * before), then doubled each time up to idlePollMs.
 */
export function idlePause(pollMs: number, idlePollMs: number, emptyPolls: number): number {
  if (emptyPolls <= 1) return pollMs;
  return Math.min(idlePollMs, pollMs * 2 ** Math.min(emptyPolls - 1, 30));
}
const CLEANUP_BATCH = 5_000;
const MAX_BACKOFF_MS = 30_000;

/**
 * Relays committed outbox rows to the bus, in id order, and marks them
 * published. Several replicas may run it: a transaction-scoped advisory lock
 * lets one relay publish at a time (so the stream keeps commit order for each
 * meeting), and `for update skip locked` keeps rows from ever being claimed
 * twice. A crash between publish and mark republishes the row with the same
 * msgId, which the bus de-duplicates. A batch is published without waiting
 * row by row, yet stored in order (PublishOptions.after).
 */
export function startOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const { db, bus, logger } = options;
  const pollMs = options.pollMs ?? 1_000;
  const idlePollMs = options.wokenByEveryWrite ? Math.max(pollMs, WOKEN_IDLE_POLL_MS) : pollMs;
  const batchSize = options.batchSize ?? 50;
  const retainMs = options.retainPublishedMs ?? 10 * 60_000;
  const bySubject = new Map(options.events.map((e) => [e.subject, e]));
  const subjects = [...bySubject.keys()];

  let stopped = false;
  let woken = false;
  let interrupt: (() => void) | undefined;
  let lastCleanup = 0;
  // Polls in a row that held the lock and found nothing; a wake starts the count again.
  let emptyPolls = 0;
  // Lag as of the last batch: undefined while another replica relays (it reports the lag).
  let lag: { seconds: number; at: number } | undefined;
  let schema = "outbox";
  const stopObserving = observeOutboxLag(() => {
    if (lag === undefined) return undefined;
    // A row left behind keeps ageing between batches; an empty outbox stays at 0 until the next one.
    return { outbox: schema, seconds: lag.seconds === 0 ? 0 : lag.seconds + (Date.now() - lag.at) / 1_000 };
  });

  const pause = (ms: number, wakeable: boolean) =>
    new Promise<void>((resolve) => {
      if (stopped || (wakeable && woken)) return resolve();
      const timer = setTimeout(finish, ms);
      function finish() {
        clearTimeout(timer);
        interrupt = undefined;
        resolve();
      }
      interrupt = () => {
        if (stopped || wakeable) finish();
      };
    });

  // The lock, the claim and the mark in one statement (on the embedded database a statement is
  // most of a batch's cost). The lock's CTE is evaluated once, before the claim, which claims
  // nothing unless the lock is held. The claimed rows are marked published at once, in the
  // batch's transaction: those that then fail to publish are unmarked before it commits
  // (unmarkSql), so what commits is as if only the published ones had been marked. Its subjects
  // and size are the relay's own constants, written in: the statement has no parameters, so on
  // Postgres it goes in one message with the BEGIN before it.
  const claimSql = `with held_lock as materialized (
       select pg_try_advisory_xact_lock(hashtext(current_schema() || '.outbox')) as locked, current_schema() as schema
     ),
     claim as materialized (
       select id, subject, payload, msg_id, trace_context, extract(epoch from (clock_timestamp() - created_at))::float8 as age_seconds
         from outbox
        where (select locked from held_lock) and published_at is null and subject in (${subjects.map(sqlText).join(", ")})
        order by id
        limit ${Number(batchSize)}
          for update skip locked
     ),
     marked as (
       update outbox set published_at = now() from claim where outbox.id = claim.id
     )
     select held_lock.locked, held_lock.schema, claim.*
       from held_lock
       left join claim on true
      order by claim.id`;
  /** Unmarks the claimed rows not published: those from the first that failed on. */
  const unmarkSql = (ids: readonly OutboxRow["id"][]) => `update outbox set published_at = null where id in (${ids.map(digits).join(", ")})`;

  /** Publishes the claimed rows; `unpublished` are the rows to unmark: from the first that failed on. */
  const publishClaimed = async (
    claimed: LockedClaim[],
    publish: (row: OutboxRow, options: PublishOptions) => Promise<void>,
  ): Promise<{ result: BatchResult; unpublished: OutboxRow["id"][] }> => {
    const held = claimed[0]!;
    schema = held.schema;
    if (!held.locked) return { result: { more: false, locked: false }, unpublished: [] };
    const rows: OutboxRow[] = claimed.filter((row): row is LockedClaim & OutboxRow => row.id !== null);
    // The batch goes out at once (one round trip, not one per row; on the in-process bus one
    // append), each row stored only right after the row before it, so none overtakes one that failed.
    const outcomes = await Promise.allSettled(
      rows.map((row, i) =>
        // Published in the trace of the request that wrote the row.
        withTraceContext(row.trace_context, () =>
          publish(row, { msgId: row.msg_id, ...(i > 0 ? { after: rows[i - 1]!.msg_id } : {}) }),
        ),
      ),
    );
    const firstFailed = outcomes.findIndex((o) => o.status === "rejected");
    const unpublished = firstFailed === -1 ? [] : rows.slice(firstFailed).map((row) => row.id);
    const left = firstFailed === -1 ? undefined : rows[firstFailed];
    const known = { locked: true, ...(left ? { oldestLeftSeconds: Number(left.age_seconds) } : {}) };
    if (firstFailed === -1) return { result: { ...known, more: rows.length === batchSize, claimed: rows.length }, unpublished };
    const failure = (outcomes[firstFailed] as PromiseRejectedResult).reason;
    // The stream's last event was not the row before: that row was already stored earlier (a
    // republish after a crash). Not a failure: the next batch starts at this row.
    if (failure instanceof PublishOrderError) return { result: { ...known, more: true }, unpublished };
    return { result: { ...known, more: false, failure }, unpublished };
  };

  // Embedded: through knex, whose transaction the in-process bus's log joins (its append is the relay's).
  const relayEmbeddedBatch = (): Promise<BatchResult> =>
    db.transaction(async (trx) => {
      // Rows committed before this point are seen by the claim below (its snapshot is taken after);
      // only a wake from now on asks for another batch. Cleared when the loop went round instead, a
      // wake of a row committed while this batch waited for its connection (on the embedded database,
      // for its turn) asked for a batch after this one, which found nothing.
      woken = false;
      const claimed = await trx.raw<{ rows: LockedClaim[] }>(claimSql);
      const publish = (row: OutboxRow, options: PublishOptions) => bus.publish(bySubject.get(row.subject)!, row.payload, options);
      const { result, unpublished } = await publishClaimed(claimed.rows, publish);
      if (unpublished.length > 0) await trx.raw(unmarkSql(unpublished));
      return result;
    });

  // Postgres: on a connection of the pool, without knex (its transaction and query builder cost
  // the relay more than its statements did), in two round trips: BEGIN with the claim, COMMIT
  // (after the unmarking, when a row failed). The same statements, locks and order as through knex.
  const relayPostgresBatch = async (): Promise<BatchResult> => {
    const { connection, release } = await holdConnection(db);
    try {
      woken = false;
      // jsonb as the text Postgres sends: a payload is published as it is, neither parsed nor encoded again.
      const types = { getTypeParser: (oid: number, format?: "text" | "binary") => (oid === JSONB_OID ? jsonText : connection.getTypeParser(oid, format)) };
      const [, claimed] = (await connection.query({ text: `begin; ${claimSql}`, types } as never)) as unknown as [unknown, { rows: LockedClaim[] }];
      const publish = (row: OutboxRow, options: PublishOptions) => bus.publishStored(bySubject.get(row.subject)!, row.payload as string, options);
      const rows = claimed.rows.map((row): LockedClaim => {
        const trace: unknown = row.trace_context;
        return typeof trace === "string" ? ({ ...row, trace_context: JSON.parse(trace) as TraceCarrier } as LockedClaim) : row;
      });
      const { result, unpublished } = await publishClaimed(rows, publish);
      // The transaction the claim began ends here whatever the batch found (another replica's lock included): a
      // connection back in the pool inside it would run its next user's statements uncommitted.
      const commit = unpublished.length > 0 ? `${unmarkSql(unpublished)}; commit` : "commit";
      await connection.query(commit);
      return result;
    } catch (err) {
      // Whatever was begun is rolled back (outside a transaction, ROLLBACK only warns); a lost connection is the pool's to drop.
      await connection.query("rollback").catch(() => undefined);
      throw err;
    } finally {
      await release();
    }
  };

  const relayBatch = isEmbedded(db) ? relayEmbeddedBatch : relayPostgresBatch;

  const cleanup = async () => {
    if (Date.now() - lastCleanup < CLEANUP_EVERY_MS) return;
    lastCleanup = Date.now();
    await db.raw(
      `delete from outbox where id in (
         select id from outbox where published_at < now() - make_interval(secs => ?) order by id limit ?)`,
      [retainMs / 1_000, CLEANUP_BATCH],
    );
  };

  const run = async () => {
    let failures = 0;
    while (!stopped) {
      let result: BatchResult;
      try {
        result = await relayBatch();
      } catch (err) {
        result = { more: false, failure: err, locked: lag !== undefined };
      }
      if (!result.locked) lag = undefined;
      else if (result.oldestLeftSeconds !== undefined) lag = { seconds: result.oldestLeftSeconds, at: Date.now() };
      else if (result.failure === undefined) lag = { seconds: 0, at: Date.now() };
      if (result.failure !== undefined) {
        failures += 1;
        logger.warn({ err: result.failure, failures }, "outbox relay could not publish; retrying");
        await pause(Math.min(pollMs * 2 ** (failures - 1), MAX_BACKOFF_MS), false);
        continue;
      }
      failures = 0;
      emptyPolls = result.locked && result.claimed === 0 ? emptyPolls + 1 : 0;
      if (result.more) continue;
      try {
        await cleanup();
      } catch (err) {
        logger.warn({ err }, "outbox cleanup failed");
      }
      await pause(idlePause(pollMs, idlePollMs, emptyPolls), true);
    }
  };

  const done = run();
  return {
    wake: () => {
      woken = true;
      emptyPolls = 0;
      interrupt?.();
    },
    stop: async () => {
      stopped = true;
      interrupt?.();
      await done;
      stopObserving();
    },
  };
}
