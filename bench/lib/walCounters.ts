import type { Knex } from "@sched/db";

/**
 * The write-ahead log a database wrote between two positions, read back with
 * pg_walinspect (Postgres 15's contrib): only the records of its own
 * relations (and the commits of their transactions), so other databases'
 * work on a shared server does not count. Needs a superuser connection.
 */
export interface WalOfDatabase {
  records: number;
  /** Record bytes, full-page images left out: those follow the checkpoints' timing more than the work. */
  bytes: number;
  fullPageBytes: number;
  /** Records by resource manager and type, e.g. "Heap/INSERT", "Btree/INSERT_LEAF". */
  byType: Map<string, number>;
}

/** The replication slot that keeps the log from here on while a database's work is measured (other databases' work would have it recycled). */
const slotOf = "'bench_wal_' || current_database()";

/**
 * Makes pg_walinspect available in the connection's database, keeps the log
 * from now on (a replication slot of the database's name: walRelease drops
 * it) and returns the log's current position.
 */
export async function walPosition(db: Knex): Promise<string> {
  await db.raw("create extension if not exists pg_walinspect with schema public");
  const { rows } = await db.raw<{ rows: { lsn: string }[] }>(`select lsn::text from pg_create_physical_replication_slot(${slotOf}, true)`);
  return rows[0]!.lsn;
}

/** Lets the server recycle the log kept for walSince. */
export async function walRelease(db: Knex): Promise<void> {
  await db.raw(`select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name = ${slotOf}`);
}

/** What the connection's database wrote to the log since `from`. */
export async function walSince(db: Knex, from: string): Promise<WalOfDatabase> {
  const { rows } = await db.raw<{ rows: { kind: string; records: string; bytes: string; fpi: string }[] }>(
    `with wal as (
       select xid, resource_manager, record_type, record_length, fpi_length, block_ref
       from public.pg_get_wal_records_info(?::pg_lsn, pg_current_wal_lsn())
     ), mine as (
       select * from wal
       where block_ref like '%/' || (select oid from pg_database where datname = current_database()) || '/%'
     ), commits as (
       select * from wal where resource_manager = 'Transaction' and xid in (select xid from mine where xid <> 0)
     )
     select resource_manager || '/' || split_part(record_type, '+', 1) as kind, count(*) as records,
            sum(record_length - fpi_length) as bytes, sum(fpi_length) as fpi
     from (select * from mine union all select * from commits) r
     group by 1 order by 1`,
    [from],
  );
  const byType = new Map(rows.map((r) => [r.kind, Number(r.records)]));
  const sum = (pick: (r: (typeof rows)[number]) => string) => rows.reduce((total, r) => total + Number(pick(r)), 0);
  return { records: sum((r) => r.records), bytes: sum((r) => r.bytes), fullPageBytes: sum((r) => r.fpi), byType };
}

/** Lines for a report: the log's bytes and records per unit of work, heap and index records by type. */
export function walPer(wal: WalOfDatabase, units: number): string[] {
  const per = (n: number, digits: number) => (n / Math.max(1, units)).toFixed(digits);
  const of = (manager: string) =>
    [...wal.byType]
      .filter(([kind]) => kind.split("/")[0]!.startsWith(manager))
      .map(([kind, n]) => `${kind.split("/")[1]} ${per(n, 2)}`)
      .join(", ");
  return [
    `WAL: ${per(wal.bytes, 0)} bytes in ${per(wal.records, 2)} records (full-page images besides: ${per(wal.fullPageBytes, 0)} bytes)`,
    `  heap records: ${of("Heap")}`,
    `  index records: ${of("Btree")}`,
  ];
}
