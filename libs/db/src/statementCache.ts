/**
 * Which statements the embedded database keeps prepared: a bounded map from
 * (search path, text) to the statement prepared for it (`Kept`: its name and
 * what the database told of it), the least recently run given up first. A
 * plan is bound to the search path it was prepared under, so the same text
 * under two schemas is two statements.
 */
export class StatementCache<Kept> {
  /** Insertion order is recency: a statement run again moves to the end. */
  private readonly statements = new Map<string, Kept>();
  private prepared = 0;

  constructor(readonly capacity: number) {}

  /** The statement kept prepared for `sql` under `searchPath`, if there is one (it becomes the most recently run). */
  find(searchPath: string, sql: string): Kept | undefined {
    const key = keyOf(searchPath, sql);
    const statement = this.statements.get(key);
    if (statement === undefined) return undefined;
    this.statements.delete(key);
    this.statements.set(key, statement);
    return statement;
  }

  /** A fresh name to prepare `sql` under; kept() once the database has prepared it. */
  nameFor(): string {
    this.prepared += 1;
    return `kept_${this.prepared}`;
  }

  /**
   * Records `statement` as prepared for `sql` under `searchPath`; returns the
   * statements given up to stay within capacity, for the database to close.
   */
  kept(searchPath: string, sql: string, statement: Kept): Kept[] {
    this.statements.set(keyOf(searchPath, sql), statement);
    const evicted: Kept[] = [];
    for (const [key, old] of this.statements) {
      if (this.statements.size <= this.capacity) break;
      this.statements.delete(key);
      evicted.push(old);
    }
    return evicted;
  }

  /** Forgets `sql` under `searchPath`: its statement is returned, for the database to close. */
  forget(searchPath: string, sql: string): Kept | undefined {
    const key = keyOf(searchPath, sql);
    const statement = this.statements.get(key);
    this.statements.delete(key);
    return statement;
  }

  get size(): number {
    return this.statements.size;
  }
}

function keyOf(searchPath: string, sql: string): string {
  return `${searchPath}\u0000${sql}`;
}

/**
 * Whether a statement is worth keeping prepared: one that Postgres plans
 * (reads and writes), sent with parameters or given a name. Session and
 * transaction commands (set, begin, commit, savepoint) and DDL plan nothing.
 */
export function isKeptStatement(sql: string, parameters: number, named: boolean): boolean {
  if (parameters === 0 && !named) return false;
  return /^\s*(select|insert|update|delete|with)\b/i.test(sql);
}
