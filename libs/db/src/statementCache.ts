/**
 * Which statements the embedded database keeps prepared, by name: a bounded
 * map from (search path, text) to the name it was prepared under, the least
 * recently run given up first. A plan is bound to the search path it was
 * prepared under, so the same text under two schemas is two statements.
 */
export class StatementCache {
  /** Insertion order is recency: a statement run again moves to the end. */
  private readonly names = new Map<string, string>();
  private prepared = 0;

  constructor(readonly capacity: number) {}

  /** The name `sql` is kept prepared under for `searchPath`, if it is (and it becomes the most recently run). */
  find(searchPath: string, sql: string): string | undefined {
    const key = keyOf(searchPath, sql);
    const name = this.names.get(key);
    if (name === undefined) return undefined;
    this.names.delete(key);
    this.names.set(key, name);
    return name;
  }

  /** A fresh name to prepare `sql` under; kept() once the database has prepared it. */
  nameFor(): string {
    this.prepared += 1;
    return `kept_${this.prepared}`;
  }

  /**
   * Records `name` as prepared for `sql` under `searchPath`; returns the
   * names given up to stay within capacity, for the database to close.
   */
  kept(searchPath: string, sql: string, name: string): string[] {
    this.names.set(keyOf(searchPath, sql), name);
    const evicted: string[] = [];
    for (const [key, old] of this.names) {
      if (this.names.size <= this.capacity) break;
      this.names.delete(key);
      evicted.push(old);
    }
    return evicted;
  }

  /** Forgets `sql` under `searchPath`: its name is returned, for the database to close. */
  forget(searchPath: string, sql: string): string | undefined {
    const key = keyOf(searchPath, sql);
    const name = this.names.get(key);
    this.names.delete(key);
    return name;
  }

  get size(): number {
    return this.names.size;
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
