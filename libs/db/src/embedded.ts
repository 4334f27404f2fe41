import type { PGliteOptions, QueryOptions, Results } from "@electric-sql/pglite";
import type { StoringOutcome } from "@sched/bus";
import type { Knex } from "knex";
import ClientPgLite from "knex-pglite";
import { AsyncLocalStorage } from "node:async_hooks";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { ACQUIRE_TIMEOUT_MS } from "./acquireTimeout.js";
import { analyzeDue, type TableActivity } from "./analyzeDue.js";
import { inBackground, SessionTurns } from "./embeddedSession.js";
import { KeptStatements } from "./embeddedStatements.js";
import { ThreadedPGlite } from "./embeddedThread.js";
import { isKeptStatement } from "./statementCache.js";
import { initialisedFolder, keepInitialisedFolder } from "./embeddedTemplate.js";

/**
 * initdb's 16 MB WAL segments and Postgres's wal sizes (80 MB kept for reuse,
 * 1 GB before a checkpoint) are made for servers; PGlite runs single-user,
 * with no checkpointer of its own, so its folder grew to whatever the WAL
 * reached between two starts. 1 MB segments, a few kept, and a checkpoint
 * every 16 MB of WAL keep a data folder small (and recovery after a crash
 * short). The segment size is fixed when the folder is created.
 */
const SMALL_FOLDER: PGliteOptions = {
  initDbStartParams: ["--wal-segsize=1"],
  postgresqlconf: ["min_wal_size=4MB", "max_wal_size=16MB"],
};

/** The Postgres of PGlite 0.5: knex asks no version of the embedded database. */
const EMBEDDED_POSTGRES_VERSION = "18.0";

/** How often dead rows are made reusable (see vacuum()). */
const VACUUM_EVERY_MS = 5 * 60_000;

/** How often the tables' changes are looked at, to analyze those that changed enough (see analyzeChanged()). */
const ANALYZE_CHECK_EVERY_MS = 10_000;

/**
 * ANALYZE samples 300 rows per unit of the statistics target: Postgres's 100
 * reads 30,000 rows of a table and every wide value in them (the event log's
 * and outboxes' payloads), on the one thread that answers requests. 10 reads
 * 3,000, and still tells the planner how many rows a key's value has, which
 * is what the services' plans turn on.
 */
const ANALYZE_STATISTICS_TARGET = 10;

/** A name as an SQL identifier, whatever it holds. */
const quotedName = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/** Each user table's rows and changes since its last ANALYZE, as analyzeDue weighs them. */
const TABLE_ACTIVITY_SQL = `select schemaname as schema, relname as table, n_live_tup::float8 as "liveRows", n_mod_since_analyze::float8 as "changedSinceAnalyze"
  from pg_stat_user_tables`;

/** A transaction holding the session, as seen from the code it runs. */
interface HeldSession {
  database: EmbeddedDatabase;
  /** False once the transaction's own code has finished: its commit or rollback follows. */
  active: boolean;
  /** Queries of joining handles running on it now. */
  joined: number;
  /** Told how the transaction ended (see whenCallersTransactionEnds); shared with the transactions nested in it. */
  onEnd: Array<(outcome: StoringOutcome) => void>;
}

const heldSessions = new AsyncLocalStorage<HeldSession>();

/**
 * One embedded Postgres (PGlite) for every schema of the process, on a thread
 * of its own (ThreadedPGlite). PGlite has a single session, so the handles on
 * it take turns: each query, or each whole transaction, holds the session (a
 * pool of one, shared by all handles) and sets its handle's schema as the
 * search path first. A handle opened with
 * `joinsTransactions` (the in-process bus's event log) does not wait while
 * the code it is called from holds the session in a transaction: its query
 * runs in that transaction, committed or rolled back with it. An outbox
 * relay publishes inside its transaction; waiting there would wait for itself.
 */
export class EmbeddedDatabase {
  /** The session, handed to one query or transaction at a time, in turn: requests before background work. */
  readonly session: SessionTurns<ThreadedPGlite>;
  /** Statements kept parsed and planned in the session, by search path and text. */
  readonly statements: KeptStatements;
  /** The search path the session has: "" (Postgres's default) until switched; undefined when a switch may have failed. */
  private sessionPath: string | undefined = "";
  /** The search path of the handle holding the session: set with its first statement (searchPathSwitch). */
  private wantedPath = "";

  private readonly vacuuming: NodeJS.Timeout;
  private readonly analyzing: NodeJS.Timeout;
  /** The vacuum or analyze under way or last done: one at a time, and close() waits for it. */
  private lastUpkeep: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly pglite: ThreadedPGlite,
    vacuumEveryMs: number,
    analyzeCheckEveryMs: number,
  ) {
    this.vacuuming = inBackground(() => setInterval(() => void this.vacuum(), vacuumEveryMs).unref());
    this.analyzing = inBackground(() => setInterval(() => void this.analyzeChanged(), analyzeCheckEveryMs).unref());
    // The session outlives every turn; close() ends it.
    this.session = new SessionTurns(pglite, ACQUIRE_TIMEOUT_MS);
    this.statements = new KeptStatements(pglite, this);
  }

  /**
   * A database in `dataDir` (created when missing), or in memory. A new one
   * starts from `startFrom` when given (a folder taken with `folder()`, such
   * as one with every schema migrated), else from a freshly initialised one.
   */
  static async open(dataDir?: string, options: { vacuumEveryMs?: number; analyzeCheckEveryMs?: number; startFrom?: Blob } = {}): Promise<EmbeddedDatabase> {
    const fresh = !dataDir || !existsSync(join(dataDir, "PG_VERSION"));
    if (dataDir) mkdirSync(dataDir, { recursive: true });
    const loadDataDir = fresh ? (options.startFrom ?? (await initialisedFolder(SMALL_FOLDER))) : undefined;
    const pglite = await ThreadedPGlite.open({ ...(dataDir ? { dataDir } : {}), ...SMALL_FOLDER, ...(loadDataDir ? { loadDataDir } : {}) });
    if (fresh && !loadDataDir) await keepInitialisedFolder(pglite, SMALL_FOLDER);
    return new EmbeddedDatabase(pglite, options.vacuumEveryMs ?? VACUUM_EVERY_MS, options.analyzeCheckEveryMs ?? ANALYZE_CHECK_EVERY_MS);
  }

  /** The database's whole folder as it is now, as a tarball `open` can start another database from. */
  folder(): Promise<Blob> {
    return this.inTurn((session) => session.dumpDataDir());
  }

  /**
   * Points the session at `schema`; called by the handle that was just
   * handed the session. Nothing is sent yet: the switch goes with the turn's
   * first statement (searchPathSwitch), in the same call into the database
   * for a kept statement, so a turn costs no call of its own for it.
   */
  useSchema(schema: string): void {
    this.wantedPath = schema;
  }

  /** The session's search path for the statements of the turn (empty: Postgres's default, never switched). */
  get currentSearchPath(): string {
    return this.wantedPath;
  }

  /**
   * The statement to send before the next one when the session's search
   * path is not yet the turn's, taken as sent; call searchPathLost if the
   * call carrying it fails. A switch is sent at a turn's first statement,
   * outside any transaction (a transaction's turn begins with BEGIN), so a
   * rollback never takes it back; were it sent inside one, it is sent again
   * before each statement after, whatever the transaction's end.
   */
  searchPathSwitch(): string | undefined {
    if (this.sessionPath === this.wantedPath) return undefined;
    this.sessionPath = this.pglite.isInTransaction() ? undefined : this.wantedPath;
    return `set search_path to "${this.wantedPath}"`;
  }

  /** The call that carried a switch failed: the session's search path is not known. */
  searchPathLost(): void {
    this.sessionPath = undefined;
  }

  /**
   * PGlite runs Postgres single-user, without autovacuum: the rows that
   * updates and deletes leave behind (outbox marks, consumer positions,
   * expired keys) are made reusable here, in the session's turn, or the
   * folder would only grow.
   */
  private vacuum(): Promise<void> {
    return this.upkeep(async () => {
      await this.inTurn((session) => session.query("vacuum"));
    }, undefined);
  }

  /**
   * Nor does anything else gather statistics: a table's plans would be made
   * with the planner's defaults however it grew (a thousandth of the rows
   * for a column's value, one organizer's meetings as rare as any), and so
   * would the generic plans of the kept statements. The tables that changed
   * enough since their last ANALYZE (analyzeDue, autovacuum's rule) are
   * analyzed, each in a background turn of its own; ANALYZE drops the plans
   * made on the old statistics, and the statements are planned again on
   * their next run. Returns the tables analyzed ("schema.table").
   */
  analyzeChanged(): Promise<string[]> {
    return this.upkeep(async () => {
      const tables = await this.inTurn((session) => session.query<TableActivity>(TABLE_ACTIVITY_SQL));
      const analyzed: string[] = [];
      for (const { schema, table } of tables.rows.filter(analyzeDue)) {
        await this.inTurn((session) =>
          session.transaction(async (tx) => {
            await tx.query(`set local default_statistics_target = ${ANALYZE_STATISTICS_TARGET}`);
            await tx.query(`analyze ${quotedName(schema)}.${quotedName(table)}`);
          }),
        );
        analyzed.push(`${schema}.${table}`);
      }
      return analyzed;
    }, []);
  }

  /** Runs `work` after the upkeep before it; should the database close or stay busy, the next round does it, and `otherwise` is the answer. */
  private upkeep<T>(work: () => Promise<T>, otherwise: T): Promise<T> {
    const done = this.lastUpkeep.then(work).catch(() => otherwise);
    this.lastUpkeep = done;
    return done;
  }

  /** `work` on the session, in a turn of its own. */
  private async inTurn<T>(work: (session: ThreadedPGlite) => Promise<T>): Promise<T> {
    const session = await this.session.acquire().promise;
    try {
      return await work(session);
    } finally {
      this.session.release(session);
    }
  }

  /** Closes the database; every handle on it must be destroyed first. */
  async close(): Promise<void> {
    clearInterval(this.vacuuming);
    clearInterval(this.analyzing);
    await this.lastUpkeep;
    await this.session.destroy();
    await this.pglite.close();
  }

  /** The session, when the calling code runs in a transaction of this database that holds it. */
  heldByCaller(): HeldSession | undefined {
    const held = heldSessions.getStore();
    return held?.database === this && held.active ? held : undefined;
  }
}

export interface EmbeddedHandleOptions {
  database: EmbeddedDatabase;
  schema: string;
  /**
   * Queries run in the caller's transaction when it holds the session (see
   * EmbeddedDatabase), under the caller's search path: they name their
   * schema, so once the schema is migrated (leaveSearchPath) the handle
   * leaves the session's search path as it finds it.
   */
  joinsTransactions?: boolean;
  /** The session's search path is not switched to `schema` for this handle's queries. */
  leavesSearchPath?: boolean;
  /** Closes the database when the handle is destroyed: a database of the handle's own. */
  ownsDatabase?: boolean;
}

type KnexClientConfig = Knex.Config & { embedded: EmbeddedHandleOptions };
type Container = (trx: Knex.Transaction) => unknown;
interface KnexQuery {
  sql: string;
  bindings?: unknown[];
  options?: QueryOptions & { name?: string };
  response?: Results;
}

interface PgLiteClient {
  config: KnexClientConfig;
  pglite: ThreadedPGlite;
  _driver(): void;
  acquireConnection(): Promise<ThreadedPGlite>;
  releaseConnection(connection: ThreadedPGlite): Promise<void>;
  transaction(container: Container, config: unknown, outerTx: unknown): unknown;
  _query(connection: ThreadedPGlite, obj: KnexQuery): Promise<KnexQuery>;
  processResponse(obj: unknown, runner: unknown): unknown;
  destroy(callback?: unknown): Promise<void>;
}

/**
 * knex's PGlite client on a shared EmbeddedDatabase: turns on the session
 * instead of a connection of its own, and marks the code of its transactions
 * as holding the session.
 */
class EmbeddedClient extends (ClientPgLite as unknown as new (config: Knex.Config) => PgLiteClient) {
  private get embedded(): EmbeddedHandleOptions {
    return this.config.embedded;
  }

  /** Whether this handle joins transactions and the calling code holds the session in one. */
  joins(): boolean {
    return (this.embedded.joinsTransactions ?? false) && this.embedded.database.heldByCaller() !== undefined;
  }

  /** knex-pglite would start a PGlite of its own here. */
  override _driver(): void {
    this.pglite = this.embedded.database.pglite;
  }

  override async acquireConnection(): Promise<ThreadedPGlite> {
    const { database, schema, joinsTransactions } = this.embedded;
    const held = joinsTransactions ? database.heldByCaller() : undefined;
    if (held) {
      held.joined += 1;
      return database.pglite;
    }
    const connection = await super.acquireConnection();
    if (!this.embedded.leavesSearchPath) database.useSchema(schema);
    return connection;
  }

  override releaseConnection(connection: ThreadedPGlite): Promise<void> {
    // A query that joined a transaction returns nothing to the pool: the transaction holds the session.
    const held = heldSessions.getStore();
    if (this.embedded.joinsTransactions && held?.database === this.embedded.database && held.joined > 0) {
      held.joined -= 1;
      return Promise.resolve();
    }
    // Handed back to the session itself, not through this handle's pool: a handle destroyed while
    // its query ran (a service stopping beside its own timer's work) has no pool left, and a turn
    // not ended would leave every other handle waiting for the session.
    this.embedded.database.session.release(connection);
    return Promise.resolve();
  }

  override transaction(container: Container, config: unknown, outerTx: unknown): unknown {
    const database = this.embedded.database;
    const enclosing = outerTx ? heldSessions.getStore() : undefined;
    const marked: Container = (trx) => {
      const held: HeldSession = { database, active: true, joined: 0, onEnd: enclosing?.database === database ? enclosing.onEnd : [] };
      // Only the outermost transaction's end is the end of what was written in it.
      const tell = (outcome: StoringOutcome) => {
        if (enclosing === undefined) for (const told of held.onEnd.splice(0)) told(outcome);
      };
      const executed = (trx as unknown as { executionPromise: Promise<unknown> }).executionPromise;
      return heldSessions.run(held, () => {
        let result: unknown;
        try {
          result = container(trx);
        } catch (err) {
          held.active = false;
          void executed.then(() => tell("undone"), () => tell("undone"));
          throw err;
        }
        // knex commits when a returned promise settles, and waits for commit() otherwise: keep the kind.
        if (result instanceof Promise) {
          // The work succeeded and the commit did: kept. Either failed: rolled back.
          const worked = result.then(() => true, () => false);
          void executed.then(async () => tell((await worked) ? "kept" : "undone"), () => tell("undone"));
          return result.finally(() => (held.active = false));
        }
        held.active = false;
        // Ended by the container's own commit() or rollback(), which cannot be told apart from here.
        void executed.then(() => tell("unknown"), () => tell("undone"));
        return result;
      });
    };
    return super.transaction(marked, config, outerTx);
  }

  /**
   * Reads and writes with parameters, or given a name, run on statements the
   * session keeps prepared (see KeptStatements); those without parameters in
   * one call of their own (runOnce); the rest as knex-pglite sends them.
   */
  override async _query(connection: ThreadedPGlite, obj: KnexQuery): Promise<KnexQuery> {
    const bindings = obj.bindings ?? [];
    const database = this.embedded.database;
    if (!isKeptStatement(obj.sql, bindings.length, obj.options?.name !== undefined)) {
      if (bindings.length === 0 && obj.options?.name === undefined) {
        obj.response = await database.statements.runOnce(obj.sql, obj.options);
        return obj;
      }
      const searchPath = database.searchPathSwitch();
      if (searchPath !== undefined) await connection.exec(searchPath).catch((err: unknown) => {
        database.searchPathLost();
        throw err;
      });
      return super._query(connection, obj);
    }
    obj.response = await database.statements.run(database.currentSearchPath, obj.sql, bindings, obj.options);
    return obj;
  }

  /**
   * knex-pglite names a delete's command "DEL" where knex's Postgres dialect
   * expects "DELETE", so `delete()` would resolve to the raw response instead
   * of the number of rows, as it does with `pg`.
   */
  override processResponse(obj: { method?: string; response?: { command?: string } }, runner: unknown): unknown {
    if (obj.method === "del" || obj.method === "delete") {
      const result = super.processResponse(obj, runner) as { rowCount?: number } | number;
      return typeof result === "object" && result !== null && "rowCount" in result ? result.rowCount : result;
    }
    return super.processResponse(obj, runner);
  }

  override async destroy(callback?: unknown): Promise<void> {
    await super.destroy(callback);
    if (this.embedded.ownsDatabase) await this.embedded.database.close();
  }
}

/** Whether `db` is a handle that joins transactions and the calling code holds its database's session in one. */
export function joinsCallersTransaction(db: Knex): boolean {
  const client = db.client as unknown;
  return client instanceof EmbeddedClient && client.joins();
}

/** Tells `ended` how the transaction `db` joins (joinsCallersTransaction) ends: committed, rolled back, or not known. */
export function whenCallersTransactionEnds(db: Knex, ended: (outcome: StoringOutcome) => void): void {
  const client = db.client as EmbeddedClient;
  const held = client.config.embedded.database.heldByCaller();
  if (!held) throw new Error("the calling code holds no transaction of this database");
  held.onEnd.push(ended);
}

/** From now on `db`'s queries leave the session's search path as they find it: they name their schema. */
export function leaveSearchPath(db: Knex): void {
  (db.client as EmbeddedClient).config.embedded.leavesSearchPath = true;
}

/** knex's configuration of a handle on `options.schema` of an embedded database. */
export function embeddedConfig(options: EmbeddedHandleOptions, log: Knex.Config["log"]): Knex.Config {
  return {
    client: EmbeddedClient,
    dialect: "postgres",
    version: EMBEDDED_POSTGRES_VERSION,
    connectionPool: options.database.session,
    searchPath: [options.schema],
    log,
    embedded: options,
  } as unknown as Knex.Config;
}
