import type { Stoppable } from "@sched/bus";
import type { Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import type { Mode } from "@sched/proto";
import { HISTORY_DAYS, learnPatterns } from "../domain/patterns.js";
import { runEvery } from "./periodic.js";
import { historyOf, peopleByEmails, savePatterns, takeRelearning, type KnownPerson } from "../db/queries.js";

/** People relearned per transaction. */
const BATCH = 50;

/**
 * Relearns the patterns of everyone queued, a batch per transaction, until
 * the queue is empty. A person touched by a hundred changes since the last
 * run is relearned once: learning reads their whole recent history, so doing
 * it per change made a busy calendar cost more with every meeting it held.
 * Queued e-mails of no known account are dropped; an account created later
 * queues itself. Returns how many were relearned.
 */
export async function relearnQueued(db: Knex, now: number): Promise<number> {
  let relearned = 0;
  for (;;) {
    const taken = await db.transaction(async (trx) => {
      const queued = await takeRelearning(trx, BATCH);
      const people = new Map((await peopleByEmails(trx, [...new Set(queued.map((q) => q.email))])).map((p) => [p.email, p]));
      for (const { email, mode } of queued) {
        const person = people.get(email);
        if (!person) continue;
        await relearn(trx, person, mode, now);
        relearned++;
      }
      return queued.length;
    });
    if (taken < BATCH) return relearned;
  }
}

async function relearn(db: Knex, person: KnownPerson, mode: Mode, now: number): Promise<void> {
  const history = await historyOf(db, person.email, mode, new Date(now - HISTORY_DAYS * 86_400_000));
  await savePatterns(db, person.userId, mode, learnPatterns(history, person.timezone));
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
