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

/** The occurrences (as `<occurrence id>|<email>`) of these series answered on their own. */
export async function answeredApartOf(db: Knex, seriesIds: readonly string[]): Promise<Set<string>> {
  if (seriesIds.length === 0) return new Set();
  const rows = (await db("answered_apart").whereIn("series_id", [...new Set(seriesIds)]).select("series_id", "original_start", "email")) as Array<{ series_id: string; original_start: Date; email: string }>;
  return new Set(rows.map((r) => `${occurrenceIdOf(r.series_id, new Date(r.original_start))}|${r.email}`));
}
