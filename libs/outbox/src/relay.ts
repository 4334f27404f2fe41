import type { Bus } from "@sched/bus";
import type { Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import type { EventDef } from "@sched/proto";

export interface OutboxRelayOptions {
  db: Knex;
  bus: Bus;
  logger: Logger;
  /** The events this service writes; a row is published with the def of its subject. */
  events: readonly EventDef[];
  /** Poll interval, for rows committed without a wake() (e.g. by another replica before it died). */
  pollMs?: number;
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
  id: number;
  subject: string;
  payload: unknown;
  msg_id: string;
}

interface BatchResult {
  /** Whether more rows may be waiting right now. */
  more: boolean;
  failure?: unknown;
}

const CLEANUP_EVERY_MS = 60_000;
const CLEANUP_BATCH = 5_000;
const MAX_BACKOFF_MS = 30_000;

/**
 * Relays committed outbox rows to the bus, in id order, and marks them
 * published. Several replicas may run it: a transaction-scoped advisory lock
 * lets one relay publish at a time (so the stream keeps commit order for each
 * meeting), and `for update skip locked` keeps rows from ever being claimed
 * twice. A crash between publish and mark republishes the row with the same
 * msgId, which the bus de-duplicates.
 */
export function startOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const { db, bus, logger } = options;
  const pollMs = options.pollMs ?? 1_000;
  const batchSize = options.batchSize ?? 50;
  const retainMs = options.retainPublishedMs ?? 10 * 60_000;
  const bySubject = new Map(options.events.map((e) => [e.subject, e]));
  const subjects = [...bySubject.keys()];

  let stopped = false;
  let woken = false;
  let interrupt: (() => void) | undefined;
  let lastCleanup = 0;

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

  const relayBatch = (): Promise<BatchResult> =>
    db.transaction(async (trx) => {
      const lock = await trx.raw("select pg_try_advisory_xact_lock(hashtext(current_schema() || '.outbox')) as locked");
      if (!(lock.rows[0] as { locked: boolean }).locked) return { more: false };
      const rows: OutboxRow[] = await trx("outbox")
        .select("id", "subject", "payload", "msg_id")
        .whereNull("published_at")
        .whereIn("subject", subjects)
        .orderBy("id")
        .limit(batchSize)
        .forUpdate()
        .skipLocked();
      const published: number[] = [];
      let failure: unknown;
      for (const row of rows) {
        try {
          await bus.publish(bySubject.get(row.subject)!, row.payload as never, { msgId: row.msg_id });
        } catch (err) {
          failure = err;
          break;
        }
        published.push(row.id);
      }
      if (published.length > 0) await trx("outbox").whereIn("id", published).update({ published_at: trx.fn.now() });
      return failure === undefined ? { more: rows.length === batchSize } : { more: false, failure };
    });

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
      woken = false;
      let result: BatchResult;
      try {
        result = await relayBatch();
      } catch (err) {
        result = { more: false, failure: err };
      }
      if (result.failure !== undefined) {
        failures += 1;
        logger.warn({ err: result.failure, failures }, "outbox relay could not publish; retrying");
        await pause(Math.min(pollMs * 2 ** (failures - 1), MAX_BACKOFF_MS), false);
        continue;
      }
      failures = 0;
      if (result.more) continue;
      try {
        await cleanup();
      } catch (err) {
        logger.warn({ err }, "outbox cleanup failed");
      }
      await pause(pollMs, true);
    }
  };

  const done = run();
  return {
    wake: () => {
      woken = true;
      interrupt?.();
    },
    stop: async () => {
      stopped = true;
      interrupt?.();
      await done;
    },
  };
}
