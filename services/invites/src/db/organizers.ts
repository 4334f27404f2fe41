import type { Knex } from "@sched/db";

/**
 * The organizer's address as the newest change of a meeting names it, a
 * series' changes and its occurrences' counted as one calendar object's;
 * undefined for a meeting whose changes never reached the invites service.
 */
export async function organizerOf(db: Knex, calendarMeetingId: string): Promise<string | undefined> {
  const row = (await db("meeting_changes")
    .whereRaw("coalesce(series_id, meeting_id) = ?", [calendarMeetingId])
    .orderBy("sequence", "desc")
    .first("organizer_email")) as { organizer_email: string } | undefined;
  return row?.organizer_email;
}
