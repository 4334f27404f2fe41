import type { Migration } from "@sched/db";

/**
 * A series' range (`last_end`, on the series and on its participant rows)
 * covers its exceptions: an occurrence moved past the rule's last end stays
 * in the lists, busy time and "has ended" that read the range. Rows written
 * before this widen here to their latest exception's end.
 */
export const seriesRangeCoversExceptions: Migration = {
  name: "013_series_range_covers_exceptions",
  up: async (db) => {
    await db.raw(`update meeting_series s set last_end = e.latest
                    from (select series_id, max(end_time) as latest from meeting_exceptions group by series_id) e
                   where e.series_id = s.id and e.latest > s.last_end`);
    await db.raw(`update series_participants p set last_end = s.last_end
                    from meeting_series s where s.id = p.series_id and s.last_end > p.last_end`);
  },
};
