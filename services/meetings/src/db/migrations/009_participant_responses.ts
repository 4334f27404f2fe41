import type { Migration } from "@sched/db";

/**
 * Each participant's answer to the invitation on their participant row, so
 * busy time (which reads those rows) leaves out the meetings they declined
 * without another lookup. No answer yet is `needsAction`.
 */
export const participantResponses: Migration = {
  name: "009_participant_responses",
  up: async (db) => {
    await db.raw(`alter table meeting_participants
      add column response text not null default 'needsAction' check (response in ('needsAction', 'accepted', 'declined', 'tentative')),
      add column responded_at timestamptz`);
  },
};
