import type { Knex } from "@sched/db";
import { occurrenceIdOf } from "@sched/proto";

/** One attendee's own answer to one occurrence of a series, as 013_answered_apart keeps it. */
export interface AnsweredApart {
  seriesId: string;
  originalStart: Date;
  email: string;
}

/** Keeps that these attendees answered these occurrences on their own; one statement, a repeat writes nothing. */
export async function recordAnsweredApart(db: Knex, rows: readonly AnsweredApart[]): Promise<void> {
  if (rows.length === 0) return;
  await db("answered_apart")
    .insert(rows.map((r) => ({ series_id: r.seriesId, original_start: r.originalStart.toISOString(), email: r.email.toLowerCase() })))
    .onConflict(["series_id", "original_start", "email"])
    .ignore();
}

/**
 * The occurrences (as `<occurrence id>|<email>`) of these series answered on
 * their own. The read-back rounds ask it for the series they read, and it
 * first forgets the rows of those among them that were cancelled or removed:
 * the newest change that sent anything for the series (its own id, not an
 * occurrence's) cancelled it for everyone, so no answer to any of its
 * occurrences, moved ones included, is read again. (Rows are kept by
 * series, not by time: a moved occurrence keeps its original start, and
 * invites keeps no time of a settled change, so an old original start does
 * not say the occurrence is past.)
 */
export async function answeredApartOf(db: Knex, seriesIds: readonly string[]): Promise<Set<string>> {
  if (seriesIds.length === 0) return new Set();
  const ids = [...new Set(seriesIds)];
  await db.raw(
    `delete from answered_apart a
      where a.series_id = any(?::text[])
        and not exists (select 1 from deliveries d
                         where d.meeting_id = a.series_id and d.kind = 'request'
                           and d.sequence = (select max(n.sequence) from deliveries n where n.meeting_id = a.series_id))
        and exists (select 1 from deliveries n where n.meeting_id = a.series_id)`,
    [ids],
  );
  const rows = (await db("answered_apart").whereIn("series_id", ids).select("series_id", "original_start", "email")) as Array<{ series_id: string; original_start: Date; email: string }>;
  return new Set(rows.map((r) => `${occurrenceIdOf(r.series_id, new Date(r.original_start))}|${r.email}`));
}
