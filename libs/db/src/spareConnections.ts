import { deadlinePassed, remainingMs } from "@sched/errors";
import type { Knex } from "knex";
import type pg from "pg";

/** The parts of knex's Postgres client that hand out and take back its pool's connections. */
interface PooledClient {
  acquireConnection(): Promise<pg.Client>;
  releaseConnection(connection: pg.Client): Promise<unknown>;
  pool?: { numPendingAcquires(): number };
}

/** A connection knex has marked as gone (an 'error' or 'end' it saw): only its pool may dispose of it. */
const isDisposed = (connection: pg.Client): boolean => (connection as { __knex__disposed?: unknown }).__knex__disposed !== undefined;

/**
 * Connections a named statement gave back, kept out of knex's pool until the
 * end of the turn of the event loop, for the next named statement of the same
 * turn to take at once: at a busy time a turn reads many replies and many
 * requests, and each would otherwise pay the pool's acquire (a pending
 * operation, its timer, its promises) and its release. The connections still
 * count within the pool's size, held as if in use; they go back to the pool
 * before the next turn, and at once when anyone else (a transaction, a
 * consumer) is waiting for one, so nobody waits behind them.
 */
export class SpareConnections {
  private readonly spare: pg.Client[] = [];
  private returning = false;

  constructor(private readonly client: PooledClient) {}

  /**
   * A connection for one statement: a spare one, or the pool's, waited for no
   * longer than the request's deadline (the pool's acquire is bounded by it);
   * none once the deadline has passed.
   */
  take(): pg.Client | Promise<pg.Client> {
    if (this.spare.length > 0) {
      const left = remainingMs();
      if (left !== undefined && left <= 0) return Promise.reject(deadlinePassed());
      for (let connection = this.spare.pop(); connection; connection = this.spare.pop()) {
        // One lost since it was given back goes to the pool, which disposes of it.
        if (!isDisposed(connection)) return connection;
        void this.client.releaseConnection(connection);
      }
    }
    return this.client.acquireConnection();
  }

  /** Gives a connection back after its statement: kept for this turn, unless it is broken or someone waits for one. */
  give(connection: pg.Client, failed: boolean): void {
    if (failed || isDisposed(connection) || (this.client.pool?.numPendingAcquires() ?? 0) > 0) {
      void this.client.releaseConnection(connection);
      return;
    }
    this.spare.push(connection);
    if (!this.returning) {
      this.returning = true;
      setImmediate(this.returnAll);
    }
  }

  private readonly returnAll = (): void => {
    this.returning = false;
    // A pool being destroyed waits for its used connections, these among them, so it is still there.
    for (const connection of this.spare.splice(0)) void this.client.releaseConnection(connection);
  };
}

const sparesOf = new WeakMap<object, SpareConnections>();

/** The spare connections of a Postgres handle's pool (one set per pool). */
export function spareConnections(db: Knex): SpareConnections {
  let spares = sparesOf.get(db.client as object);
  if (!spares) {
    spares = new SpareConnections(db.client as PooledClient);
    sparesOf.set(db.client as object, spares);
  }
  return spares;
}
