import type { Stoppable } from "@sched/bus";
import { holdConnection, isEmbedded, type HeldConnection, type Knex } from "@sched/db";
import type { Logger } from "@sched/logging";

/** How often a standby replica asks for the lock, and the holder checks its connection. */
const ELECTION_EVERY_MS = 2_000;

/**
 * Runs `start`'s consumers on one replica at a time: the one holding a
 * Postgres advisory lock named `name`, taken on a connection held out of the
 * pool. The others ask again every `everyMs`. A holder whose connection
 * fails (or stops answering) stops its consumers, their unacknowledged
 * events going back to the stream; Postgres frees the lock of a dead
 * session, and another replica takes over. JetStream would otherwise hand
 * the replicas sharing a durable alternate events, recorded only one after
 * the other (StreamRecorder); the recorder's position still keeps the order
 * while a handover overlaps. On an embedded database there is one process:
 * the consumers simply run.
 */
export async function whileElected(db: Knex, name: string, logger: Logger, start: () => Promise<Stoppable>, everyMs = ELECTION_EVERY_MS): Promise<Stoppable> {
  if (isEmbedded(db)) return start();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let held: { lock: HeldConnection; consumers: Stoppable; lost: () => void } | undefined;
  let turn: Promise<void> = Promise.resolve();

  const resign = async (why: unknown) => {
    const current = held;
    held = undefined;
    if (!current) return;
    if (why !== undefined) logger.warn({ err: why, name }, "lost the recording lock's connection; consumers stopped until elected again");
    await current.consumers.stop().catch((err: unknown) => logger.warn({ err, name }, "consumers did not stop cleanly"));
    const { connection } = current.lock;
    connection.off("error", current.lost);
    connection.off("end", current.lost);
    if (why === undefined) await connection.query("select pg_advisory_unlock(hashtext($1))", [name]).catch(() => undefined);
    await current.lock.release().catch(() => undefined);
  };

  // Asks for the lock (a standby), or checks the connection holding it (the holder).
  const campaign = async () => {
    if (held) {
      await held.lock.connection.query("select 1").catch((err: unknown) => resign(err));
      return;
    }
    const lock = await holdConnection(db);
    const { connection } = lock;
    let won = false;
    try {
      won = (await connection.query<{ held: boolean }>("select pg_try_advisory_lock(hashtext($1)) as held", [name])).rows[0]?.held === true;
    } finally {
      if (!won) await lock.release();
    }
    if (!won) return;
    const lost = () => void (turn = turn.then(() => resign(new Error("the connection holding the recording lock ended"))));
    connection.on("error", lost);
    connection.on("end", lost);
    // A connection lost meanwhile is dealt with once this turn ends (`lost` waits for it), so it stops these consumers.
    const entry = { lock, consumers: { stop: async () => {} }, lost };
    held = entry;
    try {
      entry.consumers = await start();
    } catch (err) {
      // Not started (the bus unreachable, say): the lock goes back, and this replica runs again for it.
      await resign(undefined);
      throw err;
    }
    logger.info({ name }, "recording events on this replica");
  };

  const next = () => {
    if (stopped) return;
    turn = turn.then(campaign).catch((err: unknown) => logger.warn({ err, name }, "recording election failed; asking again"));
    void turn.then(() => {
      if (!stopped) timer = setTimeout(next, everyMs);
    });
  };
  next();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await turn;
      await resign(undefined);
    },
  };
}
