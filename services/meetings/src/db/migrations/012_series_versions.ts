import type { Migration } from "@sched/db";

/**
 * What lists and busy time need to keep a series in memory safely, on every
 * replica:
 *
 * - `meeting_series.version` takes the next number whenever the series' row
 *   or any of its exceptions is written, by triggers, whatever the code path.
 *   A replica keeps a series with its exceptions and its expanded occurrences
 *   under (id, version), and every list and busy statement reads the versions
 *   of the series it concerns, so a change made through any replica is seen by
 *   the next request everywhere.
 * - `series_participants` lists everyone an occurrence of the series may
 *   concern: the series' participants and those of its exceptions (a person
 *   added to one occurrence only). The rows written so far gain the
 *   exceptions' participants here.
 */
export const seriesVersions: Migration = {
  name: "012_series_versions",
  up: async (db) => {
    await db.raw("alter table meeting_series add column version bigint not null default 0");
    await db.raw(`create function meeting_series_next_version() returns trigger language plpgsql as $$
      begin
        new.version := old.version + 1;
        return new;
      end
    $$`);
    await db.raw("create trigger meeting_series_version before update on meeting_series for each row execute function meeting_series_next_version()");
    // One statement-level trigger per event (a trigger with transition tables takes one event): the series of the
    // changed exceptions, each updated once however many of its exceptions the statement wrote.
    for (const [event, table] of [["insert", "new"], ["update", "new"], ["delete", "old"]] as const) {
      await db.raw(`create function meeting_exceptions_${event}_touch() returns trigger language plpgsql as $$
        begin
          update meeting_series set version = version where id in (select distinct series_id from changed);
          return null;
        end
      $$`);
      await db.raw(
        `create trigger meeting_exceptions_${event}_version after ${event} on meeting_exceptions
           referencing ${table} table as changed for each statement execute function meeting_exceptions_${event}_touch()`,
      );
    }
    await db.raw(`insert into series_participants (series_id, email, mode, last_end)
                  select distinct e.series_id, p.email, s.mode, s.last_end
                    from meeting_exceptions e join meeting_series s on s.id = e.series_id cross join unnest(e.participants) as p(email)
                  on conflict do nothing`);
  },
};
