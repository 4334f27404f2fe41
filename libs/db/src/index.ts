import { deadlinePassed, isBackingServiceUnavailable, remainingMs } from "@sched/errors";
import knexFactory, { type Knex } from "knex";
import pg from "pg";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { ACQUIRE_TIMEOUT_MS } from "./acquireTimeout.js";
import type { EmbeddedDatabase } from "./embedded.js";
import { spareConnections } from "./spareConnections.js";
import { setTimeout as pause } from "node:timers/promises";

export type { Knex } from "knex";

// Postgres returns int8 and numeric as strings to protect precision; our
// counts and sequences are far below 2^53, so read them as numbers (as PGlite does).
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number.parseFloat(v));

const statementNames = new Map<string, string>();

/**
 * A name under which Postgres keeps a statement parsed (and, once it has
 * seen it a few times, planned) on each pooled connection: for the busiest
 * statements, which otherwise pay parsing and planning on every call. Pass
 * it as `db.raw(sql, bindings).options({ name })`. One name per statement
 * text. Statements kept this way name their columns, so a migration that
 * adds columns leaves them valid. (The embedded database keeps every
 * statement with parameters prepared under a name of its own, by its
 * schema and text: see KeptStatements.)
 */
export function preparedName(prefix: string, sql: string): string {
  let name = statementNames.get(sql);
  if (!name) {
    name = `${prefix}_${createHash("sha256").update(sql).digest("hex").slice(0, 16)}`;
    statementNames.set(sql, name);
  }
  return name;
}

/** A statement run by name: its text for knex (`?`) and for pg (`$1`), and its name. */
export interface NamedStatement {
  name: string;
  sql: string;
  text: string;
}

/** Names a statement once, at start-up (`sql` with `?` placeholders and no other `?`). */
export function namedStatement(prefix: string, sql: string): NamedStatement {
  let n = 0;
  return { name: preparedName(prefix, sql), sql, text: sql.replace(/\?/g, () => `$${++n}`) };
}

/**
 * Runs a named statement and returns its rows. Outside a transaction on
 * Postgres it goes straight to a pooled connection, as knex would send it
 * but without knex building the query on every call (the busiest reads pay
 * that more than anything else in the service): the same pool, the same
 * wait bounded by the request's deadline, the same connection settings and
 * rows; a connection given back stays at hand for the rest of the turn (see
 * SpareConnections). In a transaction, or embedded, it goes through knex.
 */
export async function runNamed<Row>(db: Knex, statement: NamedStatement, bindings: readonly Knex.Value[]): Promise<Row[]> {
  if (!isEmbedded(db) && !db.isTransaction) {
    const spares = spareConnections(db);
    const connection = await spares.take();
    let failed = true;
    try {
      const rows = await new Promise<Row[]>((resolve, reject) => {
        // Built from its text, then named: a query built from a config object has pg copy the object, property by property, on every call.
        const query = new pg.Query(statement.text, [...bindings], (err, result) => (err ? reject(err) : resolve(result.rows as Row[])));
        (query as { name?: string }).name = statement.name;
        connection.query(query);
      });
      failed = false;
      return rows;
    } finally {
      spares.give(connection, failed);
    }
  }
  const { rows } = (await db.raw(statement.sql, [...bindings]).options({ name: statement.name })) as { rows: Row[] };
  return rows;
}

/**
 * Whether `db` is an embedded database (PGlite): one process, one connection,
 * so nothing to elect, to listen for or to lock against other replicas.
 */
export function isEmbedded(db: Knex): boolean {
  return db.client.config.client !== "pg";
}

/** A connection of a Postgres pool, held out of it by its holder (an advisory lock, a LISTEN) until given back. */
export interface HeldConnection {
  connection: pg.Client;
  /** Gives the connection back to the pool (once; later calls do nothing). */
  release(): Promise<void>;
}

/**
 * Takes a connection out of `db`'s pool (Postgres only: see isEmbedded) for a
 * holder that keeps it between statements: it counts within the pool's size,
 * not beside it.
 */
export async function holdConnection(db: Knex): Promise<HeldConnection> {
  const pool = db.client as { acquireConnection(): Promise<pg.Client>; releaseConnection(connection: pg.Client): Promise<unknown> };
  const connection = await pool.acquireConnection();
  let released = false;
  return {
    connection,
    release: async () => {
      if (released) return;
      released = true;
      await pool.releaseConnection(connection);
    },
  };
}

/** Where a service's schema lives. */
export type DatabaseTarget =
  | { kind: "postgres"; url: string; poolMax?: number; statementTimeoutMs?: number }
  /** An embedded Postgres of the schema's own, in `dataDir`/<schema>, or in memory when `dataDir` is undefined. */
  | { kind: "pglite"; dataDir?: string }
  /**
   * A schema of an embedded Postgres the process shares among its schemas. With
   * `joinsTransactions`, the handle's queries run in the caller's transaction
   * when the caller holds the database's session (see EmbeddedDatabase), and,
   * once migrated, name their schema: the session's search path is left alone.
   */
  | { kind: "embedded"; database: EmbeddedDatabase; joinsTransactions?: boolean };

/** One migration of a service's schema; `name` orders them and never changes once released. */
export interface Migration {
  name: string;
  up(db: Knex): Promise<void>;
  down?(db: Knex): Promise<void>;
}

/**
 * Opens the service's own schema and brings it up to date (its own migration
 * table in its own schema). In Postgres every service has its schema in the
 * shared database; embedded, in the process's one PGlite (or one of its own).
 */
export async function openSchema(target: DatabaseTarget, schema: string, migrations: readonly Migration[]): Promise<Knex> {
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`bad schema name: ${schema}`);
  if (target.kind !== "postgres") {
    const db = waitNoLongerThanTheRequest(await embedded(target, schema));
    await closedOnFailure(db, () => untilReachable(() => migrate(db, schema, migrations)));
    // A joining handle's queries name their schema (they run under the search path of the transaction they join).
    if (target.kind === "embedded" && target.joinsTransactions) (await import("./embedded.js")).leaveSearchPath(db);
    return db;
  }
  // Migrations run unbounded, on a pool of their own: building an index on a large table may take minutes.
  const migrator = postgres({ ...target, statementTimeoutMs: undefined }, schema);
  try {
    await untilReachable(() => whileHoldingMigrationLock(target.url, schema, () => migrate(migrator, schema, migrations)));
  } finally {
    await migrator.destroy();
  }
  return waitNoLongerThanTheRequest(postgres(target, schema));
}

async function closedOnFailure(db: Knex, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (err) {
    await db.destroy();
    throw err;
  }
}

/** How long a start-up keeps trying to reach its database: one still starting, or a busy machine making every connection slow. */
const STARTUP_DEADLINE_MS = 120_000;

/**
 * Start-up work, tried again while the database cannot be reached or no
 * connection comes within the pool's wait (KnexTimeoutError): a start-up is
 * not a request with a client waiting, and migrations are idempotent (each
 * runs in a transaction, and done ones are recorded).
 */
async function untilReachable(work: () => Promise<void>): Promise<void> {
  const end = Date.now() + STARTUP_DEADLINE_MS;
  for (let waitMs = 100; ; waitMs = Math.min(2 * waitMs, 2_000)) {
    try {
      return await work();
    } catch (err) {
      if (!isBackingServiceUnavailable(err) || Date.now() + waitMs > end) throw err;
      await pause(waitMs);
    }
  }
}

async function migrate(db: Knex, schema: string, migrations: readonly Migration[]): Promise<void> {
  if (await upToDate(db, schema, migrations)) return;
  await db.raw(`create schema if not exists ${schema}`);
  await db.migrate.latest({
    schemaName: schema,
    tableName: "schema_migrations",
    migrationSource: {
      getMigrations: async () => [...migrations].sort((a, b) => a.name.localeCompare(b.name)),
      getMigrationName: (m: Migration) => m.name,
      getMigration: async (m: Migration) => ({ up: (k: Knex) => m.up(k), down: (k: Knex) => (m.down ? m.down(k) : Promise.resolve()) }),
    },
  });
}

/**
 * Whether the schema has run exactly these migrations: two queries, where
 * knex's migrator, with nothing to do, takes a dozen (which adds up on the
 * embedded database, every schema taking its turn on one session). Anything
 * else, a missing or an unknown migration, goes through knex.
 */
async function upToDate(db: Knex, schema: string, migrations: readonly Migration[]): Promise<boolean> {
  const { rows: found } = await db.raw<{ rows: Array<{ exists: boolean }> }>("select to_regclass(?) is not null as exists", [`${schema}.schema_migrations`]);
  if (!found[0]?.exists) return false;
  const done = new Set<string>((await db.withSchema(schema).table("schema_migrations").pluck("name")) as string[]);
  return done.size === migrations.length && migrations.every((m) => done.has(m.name));
}

/**
 * Replicas of a service start together on Kubernetes. Creating the schema and
 * knex's migration tables races (and knex's own lock fails rather than waits),
 * so the replicas queue on a session advisory lock named after the schema:
 * the first migrates, the others find nothing left to do.
 */
async function whileHoldingMigrationLock(url: string, schema: string, work: () => Promise<void>): Promise<void> {
  const session = new pg.Client({ connectionString: url });
  await session.connect();
  try {
    await session.query("select pg_advisory_lock(hashtext($1))", [`migrate:${schema}`]);
    await work();
  } finally {
    await session.end();
  }
}

/**
 * knex's own warnings, but not the stack it prints for every connection the
 * pool could not hand out: the query fails with that error, and its caller
 * reports it (a request as one warning line), so under load or a database
 * restart the log is not flooded with stacks.
 */
const knexLog: Knex.Config["log"] = {
  warn: (message: string) => {
    if (!message.startsWith("Acquire connection error")) console.warn(message);
  },
};

/**
 * A statement or an open transaction left waiting (a lock held by a stuck
 * session, a plan gone wrong) is ended by Postgres after this long, so it
 * gives its pooled connection back: the request that ran it was answered 503
 * at its own deadline long before.
 */
function sessionLimits(statementTimeoutMs: number | undefined): { statement_timeout?: number; idle_in_transaction_session_timeout?: number } {
  return statementTimeoutMs === undefined ? {} : { statement_timeout: statementTimeoutMs, idle_in_transaction_session_timeout: statementTimeoutMs };
}

function postgres(target: { url: string; poolMax?: number; statementTimeoutMs?: number | undefined }, schema: string): Knex {
  return knexFactory({
    client: "pg",
    // Named after the schema, so pg_stat_activity and the server's logs tell which service a connection serves.
    connection: { connectionString: target.url, application_name: schema, ...sessionLimits(target.statementTimeoutMs) },
    searchPath: [schema],
    pool: { min: 0, max: target.poolMax ?? 10, acquireTimeoutMillis: ACQUIRE_TIMEOUT_MS },
    acquireConnectionTimeout: ACQUIRE_TIMEOUT_MS,
    log: knexLog,
  });
}

async function embedded(target: Exclude<DatabaseTarget, { kind: "postgres" }>, schema: string): Promise<Knex> {
  // Loaded here, not above: PGlite is an optional peer, installed where an embedded database runs (npm start, tests), absent from service images.
  const { EmbeddedDatabase, embeddedConfig } = await import("./embedded.js");
  if (target.kind === "embedded") return knexFactory(embeddedConfig({ database: target.database, schema, joinsTransactions: target.joinsTransactions ?? false }, knexLog));
  const database = await EmbeddedDatabase.open(target.dataDir ? join(target.dataDir, schema) : undefined);
  return knexFactory(embeddedConfig({ database, schema, ownsDatabase: true }, knexLog));
}

/**
 * Inside a request, the pool hands out a connection only until the
 * request's deadline: a request that could not get one in time gives up
 * (KnexTimeoutError, a 503) instead of queueing for work nobody awaits any
 * more, and one whose deadline has already passed does not queue at all.
 * knex takes the wait of each acquire from its pool when the acquire
 * starts, synchronously, so the bound is set for that one call.
 */
function waitNoLongerThanTheRequest(db: Knex): Knex {
  const client = db.client as { acquireConnection(): Promise<unknown>; pool?: { acquireTimeoutMillis: number } };
  const acquire = client.acquireConnection.bind(client);
  client.acquireConnection = () => {
    const left = remainingMs();
    if (left === undefined || !client.pool) return acquire();
    if (left <= 0) return Promise.reject(deadlinePassed());
    const pool = client.pool;
    const usual = pool.acquireTimeoutMillis;
    pool.acquireTimeoutMillis = Math.min(usual, left);
    try {
      return acquire();
    } finally {
      pool.acquireTimeoutMillis = usual;
    }
  };
  return db;
}

/**
 * Whether Postgres answers, for readiness: on a connection of its own, never
 * one of the pool's, so a probe does not queue behind requests when every
 * pooled connection is busy, and with a short time-out of its own.
 */
export async function databaseAnswers(url: string, timeoutMs: number): Promise<boolean> {
  const probe = new pg.Client({ connectionString: url, application_name: "readiness", connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  // A connection lost while the probe holds it must not become an unhandled 'error' event.
  probe.on("error", () => undefined);
  try {
    await probe.connect();
    await probe.query("select 1");
    return true;
  } catch {
    return false;
  } finally {
    await probe.end().catch(() => undefined);
  }
}

/** Postgres unique-violation, for turning a lost race into a clean 409. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint?: string };
  return e?.code === "23505" && (constraint === undefined || e.constraint === constraint);
}
