import type { Stoppable } from "@sched/bus";
import type { Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import { learnChanges, learnWhole, patternsAfter, planRelearning, type Learned } from "../domain/learning.js";
import { runEvery } from "./periodic.js";
import { forgetLearning, keepLearning, keptDaysOf, learnedOf, meetingsStartingIn, takeTouchedStarts, type Queued } from "../db/queries.js";
import { historyOf, peopleByEmails, savePatterns, takeRelearning, type KnownPerson } from "../db/queries.js";

/** People relearned per transaction. */
const BATCH = 50;

/**
 * Relearns the patterns of everyone queued, a batch per transaction, until
 * the queue is empty. A person touched by a hundred changes since the last
 * run is relearned once, and only the local days those changes touched are
 * counted again (domain/learning.ts): a change costs what it changed, not the
 * person's whole history. Queued e-mails of no known account are dropped,
 * with what was kept for them; an account created later queues itself.
 * Returns how many were relearned.
 */
export async function relearnQueued(db: Knex, now: number): Promise<number> {
  let relearned = 0;
  for (;;) {
    const taken = await db.transaction(async (trx) => {
      const queued = await takeRelearning(trx, BATCH);
      const people = new Map((await peopleByEmails(trx, [...new Set(queued.map((q) => q.email))])).map((p) => [p.email, p]));
      const touched = await takeTouchedStarts(trx, queued);
      await forgetLearning(
        trx,
        queued.filter((q) => !people.has(q.email)),
      );
      const known = queued.filter((q) => people.has(q.email));
      const kept = await learnedOf(trx, known);
      for (const q of known) {
        const key = `${q.mode} ${q.email}`;
        await relearn(trx, people.get(q.email)!, q, kept.get(key) ?? null, touched.get(key) ?? [], now);
        relearned++;
      }
      return queued.length;
    });
    if (taken < BATCH) return relearned;
  }
}

async function relearn(trx: Knex.Transaction, person: KnownPerson, queued: Queued, kept: Learned | null, touched: readonly number[], now: number): Promise<void> {
  const plan = planRelearning(kept, person.timezone, now, touched);
  const relearned =
    plan.full || !kept
      ? learnWhole(await historyOf(trx, person.email, queued.mode, new Date(plan.since)), person.timezone, plan.firstFullDay)
      : learnChanges(plan, kept, await keptDaysOf(trx, queued, plan.firstFullDay, plan.daysToRecount), await meetingsStartingIn(trx, queued, plan.since, plan.ranges));
  const span = await keepLearning(trx, queued, relearned, plan.full);
  await savePatterns(trx, person.userId, queued.mode, patternsAfter(relearned, span));
}

/** Runs relearnQueued every `everyMs` on every replica (they share the queue); stop() waits for the run in progress. */
export function startRelearning(db: Knex, logger: Logger, now: () => number, everyMs: number): Stoppable {
  return runEvery(
    everyMs,
    async () => {
      const relearned = await relearnQueued(db, now());
      if (relearned > 0) logger.debug({ relearned }, "patterns relearned");
    },
    (err) => logger.warn({ err }, "could not relearn patterns; the queue keeps them for the next run"),
  );
}
