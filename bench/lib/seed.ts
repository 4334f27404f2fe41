import type { Knex } from "@sched/db";
import { newId } from "@sched/ids";
import { DURATION_MINUTES, type Duration, type MeetingStatus, type Mode } from "@sched/proto";

export { seededRandom as random } from "@sched/testing";

export { DURATION_MINUTES };

export interface SeedMeeting {
  organizerId: string;
  organizerEmail: string;
  /** Epoch milliseconds, whole seconds. */
  start: number;
  duration: Duration;
  /** Lower-cased e-mails, no duplicates. */
  participants: string[];
  status: MeetingStatus;
}

const BATCH = 5_000;

/**
 * Writes meetings straight into the meetings schema, as the service would
 * store them (001_create_meetings: a meetings row and one meeting_participants
 * row per participant, copying mode, status and times), in batches of one
 * statement each: every column travels as one array parameter. Seeded
 * meetings have no events; they are history, not changes. Returns the ids.
 */
export async function insertMeetings(db: Knex, mode: Mode, meetings: readonly SeedMeeting[]): Promise<string[]> {
  const ids: string[] = [];
  const now = new Date().toISOString();
  for (let from = 0; from < meetings.length; from += BATCH) {
    const batch = meetings.slice(from, from + BATCH);
    const batchIds = batch.map(() => newId("mtg"));
    ids.push(...batchIds);
    await db.raw(
      `with r as (
         select * from unnest(?::text[], ?::text[], ?::text[], ?::timestamptz[], ?::timestamptz[], ?::text[], ?::text[], ?::text[])
           as r(id, organizer_id, organizer_email, start_time, end_time, duration, participants, status)
       ),
       m as (
         insert into meetings (id, mode, organizer_id, organizer_email, title, description, start_time, end_time, duration,
                               participants, status, sequence, created_at, updated_at)
         select id, ?, organizer_id, organizer_email, 'Seeded meeting', '', start_time, end_time, duration,
                string_to_array(participants, ','), status, 1, ?::timestamptz, ?::timestamptz
           from r
         returning id, mode, participants, status, start_time, end_time
       )
       insert into meeting_participants (meeting_id, email, mode, status, start_time, end_time)
       select m.id, p.email, m.mode, m.status, m.start_time, m.end_time from m, unnest(m.participants) as p(email)`,
      [
        batchIds,
        batch.map((m) => m.organizerId),
        batch.map((m) => m.organizerEmail),
        batch.map((m) => new Date(m.start).toISOString()),
        batch.map((m) => new Date(m.start + DURATION_MINUTES[m.duration] * 60_000).toISOString()),
        batch.map((m) => m.duration),
        batch.map((m) => m.participants.join(",")),
        batch.map((m) => m.status),
        mode,
        now,
        now,
      ],
    );
  }
  // As autovacuum leaves tables soon after such a load: fresh statistics, and a
  // visibility map that lets index-only scans skip the table.
  await db.raw("vacuum analyze meetings");
  await db.raw("vacuum analyze meeting_participants");
  return ids;
}
