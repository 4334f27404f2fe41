/** A table's row counts as Postgres's cumulative statistics tell them (pg_stat_user_tables). */
export interface TableActivity {
  schema: string;
  table: string;
  /** Live rows (n_live_tup). */
  liveRows: number;
  /** Rows inserted, updated or deleted since its statistics were last gathered (n_mod_since_analyze). */
  changedSinceAnalyze: number;
}

/**
 * Autovacuum's defaults for ANALYZE (autovacuum_analyze_threshold and
 * autovacuum_analyze_scale_factor): a table's statistics are gathered again
 * once more rows changed than 50 plus a tenth of its rows, so a growing table
 * is analyzed each time it grew by about a tenth, and a table that does not
 * change is never analyzed again.
 */
const ANALYZE_BASE_ROWS = 50;
const ANALYZE_SCALE = 0.1;

/** Whether `table` changed enough since its statistics were gathered to gather them again, as autovacuum would. */
export function analyzeDue(table: TableActivity): boolean {
  return table.changedSinceAnalyze > ANALYZE_BASE_ROWS + ANALYZE_SCALE * table.liveRows;
}
