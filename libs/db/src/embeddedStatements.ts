import { parse, protocol, type PGlite, type QueryOptions, type Results } from "@electric-sql/pglite";
import { concatBytes } from "./concatBytes.js";
import { StatementCache } from "./statementCache.js";

/** How many statements the session keeps prepared: every shape the services send, with room to spare. */
const KEPT_STATEMENTS = 512;

/** Postgres refusing a kept plan whose result columns a migration changed. */
function resultTypeChanged(error: { code?: string; message?: string }): boolean {
  return error.code === "0A000" && (error.message ?? "").includes("cached plan must not change result type");
}

/** A message Postgres answers with, as PGlite's parser gives it. */
export type BackendMessage = Awaited<ReturnType<PGlite["execProtocolStream"]>>[number];
export type DatabaseError = InstanceType<typeof protocol.messages.DatabaseError>;

/** What the kept statements need of the session: a PGlite, or the embedded database's ThreadedPGlite. */
type Session = Pick<PGlite, "execProtocolStream" | "runExclusive" | "isInTransaction" | "serializers" | "parsers">;

/** The session's search path, switched with the next call into the database when it must be (EmbeddedDatabase). */
export interface SearchPathSwitches {
  /** The statement that switches it, when the session needs it before the next statement; taken as sent. */
  searchPathSwitch(): string | undefined;
  /** The call that carried the switch failed. */
  searchPathLost(): void;
}

interface KeptStatement {
  name: string;
  /** The parameters' types, as the statement was prepared: what each value is serialized as. */
  parameterTypes: number[];
  /** Its RowDescription (or NoData), as the statement describes it: what the rows of each run are read with. */
  description: BackendMessage[];
}

/**
 * Statements kept parsed and planned in PGlite's session, by name. PGlite's
 * `query` parses, describes and plans every statement again, each step a
 * call into the database; a kept statement is bound and executed in one
 * call, on the plan Postgres keeps for it. The rows are read as `query`
 * reads them (the same parsers, by the same result types).
 *
 * Prepared statements outlive transactions: a statement prepared in a
 * transaction rolled back afterwards is still there, and one whose Parse
 * failed (in an aborted transaction, say) never was; so a name is recorded
 * only once Postgres answered its Parse.
 */
export class KeptStatements {
  private readonly cache: StatementCache<KeptStatement>;
  /** Names given up, closed at the start of the next call into the database. */
  private toClose: string[] = [];

  constructor(
    private readonly pglite: Session,
    private readonly searchPath: SearchPathSwitches,
    capacity = KEPT_STATEMENTS,
  ) {
    this.cache = new StatementCache(capacity);
  }

  /** Runs `sql` under `searchPath` (the session's search path now) as `pglite.query` would, on a kept statement. */
  async run<T>(searchPath: string, sql: string, params: readonly unknown[], options?: QueryOptions): Promise<Results<T>> {
    return this.pglite.runExclusive(async () => {
      try {
        return await this.execute<T>(searchPath, sql, params, options);
      } catch (err) {
        // A migration changed the columns the plan returns: prepared again, outside a transaction the statement runs again at once.
        if (!resultTypeChanged(err as DatabaseError) || this.pglite.isInTransaction()) throw err;
        return await this.execute<T>(searchPath, sql, params, options);
      }
    });
  }

  /**
   * Runs `sql`, a statement without parameters (BEGIN, COMMIT, DDL, a statement with its values
   * written in), as `pglite.query` would, in one call: as a simple query, which Postgres parses,
   * plans and runs at once, where `query` takes six calls for a statement it does not keep.
   */
  async runOnce<T>(sql: string, options?: QueryOptions): Promise<Results<T>> {
    return this.pglite.runExclusive(async () => {
      const messages = await this.call(true, protocol.serialize.query(sql));
      const error = messages.find(isError);
      if (error) throw withQuery(error, sql, undefined, options);
      return parse.parseResults(messages, this.pglite.parsers, options).at(-1) as Results<T>;
    });
  }

  /** How many statements are kept prepared now. */
  get size(): number {
    return this.cache.size;
  }

  private async execute<T>(searchPath: string, sql: string, params: readonly unknown[], options?: QueryOptions): Promise<Results<T>> {
    const statement = this.cache.find(searchPath, sql) ?? (await this.prepare(searchPath, sql, options));
    let values: Array<string | null>;
    try {
      values = params.map((param, i) => {
        if (param === null || param === undefined) return null;
        const oid = statement.parameterTypes[i] ?? 0;
        const serialize = options?.serializers?.[oid] ?? this.pglite.serializers[oid];
        return serialize ? (serialize(param) as string) : String(param);
      });
    } catch (err) {
      // A value that cannot be written (its toJSON throws, say): end what a Parse just began, as PGlite does.
      await this.call(false, protocol.serialize.sync());
      throw err;
    }
    const messages = await this.call(
      true,
      protocol.serialize.bind({ statement: statement.name, values }),
      protocol.serialize.execute({}),
      protocol.serialize.sync(),
    );
    const error = messages.find(isError);
    if (error) {
      if (resultTypeChanged(error)) this.forget(searchPath, sql);
      throw withQuery(error, sql, params, options);
    }
    return parse.parseResults([...statement.description, ...messages], this.pglite.parsers, options)[0] as Results<T>;
  }

  private async prepare(searchPath: string, sql: string, options?: QueryOptions): Promise<KeptStatement> {
    const name = this.cache.nameFor();
    const parsed = await this.call(
      false,
      protocol.serialize.parse({ name, text: sql, types: options?.paramTypes ?? [] }),
      protocol.serialize.describe({ type: "S", name }),
    );
    const error = parsed.find(isError);
    if (parsed.some((message) => message.name === "parseComplete")) {
      const statement: KeptStatement = {
        name,
        parameterTypes: parse.parseDescribeStatementResults(parsed),
        description: parsed.filter((message) => message.name === "rowDescription" || message.name === "noData"),
      };
      for (const evicted of this.cache.kept(searchPath, sql, statement)) this.close(evicted.name);
      if (!error) return statement;
    }
    // After an error Postgres skips every message until a Sync.
    await this.call(false, protocol.serialize.sync());
    throw withQuery(error ?? new Error(`statement not prepared: ${sql}`), sql, undefined, options);
  }

  private forget(searchPath: string, sql: string): void {
    const statement = this.cache.forget(searchPath, sql);
    if (statement !== undefined) this.close(statement.name);
  }

  private close(name: string): void {
    this.toClose.push(name);
  }

  /**
   * One call into the database: the search path's switch when the session
   * needs one (switchingCall), the closes pending, then `messages`; every
   * answer returned, errors among them. `syncToFs`: the data folder is synced
   * after it (PGlite's syncToFs), in the same call.
   */
  private call(syncToFs: boolean, ...messages: Uint8Array[]): Promise<BackendMessage[]> {
    const searchPath = this.searchPath.searchPathSwitch();
    const closes = this.toClose.map((name) => protocol.serialize.close({ type: "S", name }));
    this.toClose = [];
    if (searchPath !== undefined) return this.switchingCall(searchPath, [...closes, ...messages], syncToFs);
    return this.pglite.execProtocolStream(concatBytes([...closes, ...messages]), { syncToFs, throwOnError: false });
  }

  /** `messages` after a simple query switching the search path, done and answered first; its answers left out. */
  private async switchingCall(searchPath: string, messages: Uint8Array[], syncToFs: boolean): Promise<BackendMessage[]> {
    let answers: BackendMessage[];
    try {
      answers = await this.pglite.execProtocolStream(concatBytes([protocol.serialize.query(searchPath), ...messages]), { syncToFs, throwOnError: false });
    } catch (err) {
      this.searchPath.searchPathLost();
      throw err;
    }
    const switchEnd = answers.findIndex((message) => message.name === "readyForQuery") + 1;
    const refused = answers.slice(0, switchEnd).find(isError);
    if (switchEnd === 0 || refused) {
      this.searchPath.searchPathLost();
      throw refused ?? new Error(`no answer to: ${searchPath}`);
    }
    return answers.slice(switchEnd);
  }
}

function isError(message: BackendMessage): message is DatabaseError {
  return message.name === "error";
}

/** What PGlite's `query` adds to an error it throws. */
function withQuery<E extends Error>(error: E, query: string, params: readonly unknown[] | undefined, options: QueryOptions | undefined): E {
  return Object.assign(error, { query, params, queryOptions: options });
}
