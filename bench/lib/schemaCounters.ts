import type { Knex } from "@sched/db";

/**
 * A backend reports its table counters when it goes idle, at most once a
 * second and otherwise within ten: waiting this long before a reading lets
 * every backend's share of what came before arrive.
 */
const STATS_SETTLE_MS = 11_000;

/** Postgres's own counters of one table or index: the same in every Postgres wiring and whatever the machine's load. */
export interface RelationCounter {
  kind: "table" | "index";
  /** Rows inserted, updated or deleted (tables). */
  written: number;
  inserted: number;
  deleted: number;
  /** Of the updates, those made in place (HOT: no new index entries). */
  hot: number;
  /** Index entries read by scans, those of dead rows included (indexes). */
  indexRead: number;
}

/** Every table's and index's counters of a schema, by name, once the backends have reported. */
export async function schemaCounters(db: Knex, schema: string): Promise<Map<string, RelationCounter>> {
  await new Promise((resolve) => setTimeout(resolve, STATS_SETTLE_MS));
  return db.transaction(async (trx) => {
    await trx.raw("select pg_stat_clear_snapshot()");
    const { rows } = await trx.raw<{ rows: { kind: "table" | "index"; name: string; inserted: string; updated: string; deleted: string; hot: string; index_read: string }[] }>(
      `select 'table' as kind, relname as name, n_tup_ins as inserted, n_tup_upd as updated, n_tup_del as deleted, n_tup_hot_upd as hot, 0 as index_read
       from pg_stat_user_tables where schemaname = ?
       union all
       select 'index', indexrelname, 0, 0, 0, 0, idx_tup_read from pg_stat_user_indexes where schemaname = ?`,
      [schema, schema],
    );
    return new Map(
      rows.map((r) => {
        const [inserted, deleted] = [Number(r.inserted), Number(r.deleted)];
        return [r.name, { kind: r.kind, written: inserted + Number(r.updated) + deleted, inserted, deleted, hot: Number(r.hot), indexRead: Number(r.index_read) }];
      }),
    );
  });
}

/** The counters' growth from `before` to `after`, leaving out relations nothing happened to. */
export function countersSince(before: Map<string, RelationCounter>, after: Map<string, RelationCounter>): Map<string, RelationCounter> {
  const grown = new Map<string, RelationCounter>();
  for (const [name, a] of after) {
    const b = before.get(name);
    const d = {
      kind: a.kind,
      written: a.written - (b?.written ?? 0),
      inserted: a.inserted - (b?.inserted ?? 0),
      deleted: a.deleted - (b?.deleted ?? 0),
      hot: a.hot - (b?.hot ?? 0),
      indexRead: a.indexRead - (b?.indexRead ?? 0),
    };
    if (d.written + d.indexRead > 0) grown.set(name, d);
  }
  return grown;
}

/** One line per relation: rows written per delivery, inserted, updated (in place) and deleted (tables); index entries read per delivery (indexes). */
export function countersPer(grown: Map<string, RelationCounter>, deliveries: number): string[] {
  const per = (n: number, digits: number) => (n / Math.max(1, deliveries)).toFixed(digits);
  return [...grown].map(([name, c]) => (c.kind === "table"
      ? `table ${name}: ${per(c.written, 2)} rows written: ${per(c.inserted, 2)} inserted, ${per(c.written - c.inserted - c.deleted, 2)} updated (${per(c.hot, 2)} in place), ${per(c.deleted, 2)} deleted`
      : `  index ${name}: ${per(c.indexRead, 1)} entries read`));
}
