import type { Knex } from "@sched/db";

/**
 * Keeps, per meeting, the highest sequence of a change that asked its
 * participants again. One statement however many; a redelivered event
 * writes the same again, and an older change never lowers it.
 */
export async function recordAnswerResets(db: Knex, resets: readonly { meetingId: string; sequence: number }[]): Promise<void> {
  if (resets.length === 0) return;
  await db.raw(
    `insert into answer_resets (meeting_id, sequence)
     select meeting_id, max(sequence) from jsonb_to_recordset(?::jsonb) as r(meeting_id text, sequence integer) group by meeting_id
     on conflict (meeting_id) do update set sequence = greatest(answer_resets.sequence, excluded.sequence)`,
    [JSON.stringify(resets.map((r) => ({ meeting_id: r.meetingId, sequence: r.sequence })))],
  );
}

/** The sequence of the last change that asked each meeting's participants again; a meeting never asked again is missing. */
export async function answerResetsOf(db: Knex, meetingIds: readonly string[]): Promise<Map<string, number>> {
  if (meetingIds.length === 0) return new Map();
  const rows = (await db("answer_resets").whereIn("meeting_id", [...new Set(meetingIds)]).select("meeting_id", "sequence")) as Array<{ meeting_id: string; sequence: number }>;
  return new Map(rows.map((r) => [r.meeting_id, r.sequence]));
}
