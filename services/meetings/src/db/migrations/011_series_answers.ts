import type { Migration } from "@sched/db";

/**
 * Answers to recurring meetings (docs/recurrence.md). A participant's answer
 * to the whole series sits on the series row (`responses`, by e-mail), read
 * with it by every statement that reads series. An answer to one occurrence
 * is a row of its own, keyed by the occurrence's original start, whether or
 * not the occurrence is an exception: it wins over the series answer there.
 * `needsAction` there is an occurrence that asks again (its time changed).
 */
export const seriesAnswers: Migration = {
  name: "011_series_answers",
  up: async (db) => {
    await db.raw(`alter table meeting_series add column responses jsonb not null default '{}'::jsonb`);
    await db.raw(`
      create table occurrence_responses (
        series_id text collate "C" not null references meeting_series (id) on delete cascade,
        original_start timestamptz not null,
        email text not null,
        response text not null check (response in ('needsAction', 'accepted', 'declined', 'tentative')),
        responded_at timestamptz,
        primary key (series_id, original_start, email)
      )`);
  },
};
