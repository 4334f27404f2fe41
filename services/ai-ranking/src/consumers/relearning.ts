import type { Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import { keptSpanAfter, learnChanges, learnWhole, patternsAfter, planRelearning } from "../domain/learning.js";
import { runWhenWoken, type WokenRuns } from "./periodic.js";
import { readForRelearning, takeRelearning, writeRelearning, type RelearningWrite } from "../db/queries.js";

/** People relearned per transaction. */
const BATCH = 50;

/**
 * Relearns the patterns of everyone queued, a batch per transaction, until
 * the queue is empty. A person touched by a hundred changes since the last
 * run is relearned once, and only the local days those changes touched are
 * counted again (domain/learning.ts): a change costs what it changed, not the
 * person's whole history. A batch is three statements however many people
 * it holds: take them (with what is kept and the starts touched), read what
 * their plans need, write what was learned. Queued e-mails of no known
 * account are dropped, with what was kept for them; an account created
 * later queues itself. Returns how many were relearned.
 */
export async function relearnQueued(db: Knex, now: number): Promise<number> {
  let relearned = 0;
  for (;;) {
    const taken = await db.transaction(async (trx) => {
      const queued = await takeRelearning(trx, BATCH);
      const known = queued.flatMap(({ person, ...q }) => (person ? [{ ...q, person, plan: planRelearning(q.kept, person.timezone, now, q.touched) }] : []));
      const read = await readForRelearning(trx, known);
      const writes = known.map(({ email, mode, person, kept, plan }, i): RelearningWrite => {
        const { keptDays, untouched, meetings } = read[i]!;
        const full = plan.full || !kept;
        const relearned = full ? learnWhole(meetings, person.timezone, plan.firstFullDay) : learnChanges(plan, kept, keptDays, meetings);
        return { email, mode, userId: person.userId, full, relearned, patterns: patternsAfter(relearned, keptSpanAfter(relearned, full ? null : untouched)) };
      });
      await writeRelearning(trx, writes);
      relearned += writes.length;
      return queued.length;
    });
    if (taken < BATCH) return relearned;
  }
}

/**
 * With no wake, how often a replica looks at the queue anyway: for people
 * queued by a replica that stopped before relearning them.
 */
const RELEARN_FALLBACK_MS = 30_000;

/**
 * Runs relearnQueued when the history consumers queued someone (wake()), at
 * most once per `minGapMs` on every replica (they share the queue), and every
 * RELEARN_FALLBACK_MS without a wake; stop() waits for the run in progress.
 */
export function startRelearning(db: Knex, logger: Logger, now: () => number, minGapMs: number): WokenRuns {
  return runWhenWoken(
    minGapMs,
    RELEARN_FALLBACK_MS,
    async () => {
      const relearned = await relearnQueued(db, now());
      if (relearned > 0) logger.debug({ relearned }, "patterns relearned");
    },
    (err) => logger.warn({ err }, "could not relearn patterns; the queue keeps them for the next run"),
  );
}
