import type { Bus, Stoppable } from "@sched/bus";
import type { Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import { meetingEvents, userCreated, userUpdated } from "@sched/proto";
import { isWholeSeries, storedMeetingsOf, type MeetingEvent } from "../domain/seriesHistory.js";
import { runEvery } from "./periodic.js";
import { historyGeneration, occurrenceIdsOf, queueRelearningEveryMode, saveMeetings, savePerson, type KnownPerson } from "../db/queries.js";

/** Durable consumer names of one generation; a rebuild moves to the next, which reads from the first event. */
function consumerNames(generation: number): { meetings: string; people: string } {
  return { meetings: `ai-ranking-meetings-g${generation}`, people: `ai-ranking-people-g${generation}` };
}

/**
 * Keeps the history ai-ranking learns from: every meeting's latest version
 * (times, status and who attends, never the title) and every account's
 * e-mail, name, zone and preferences. Each change queues the people it
 * touches for relearning (consumers/relearning.ts). Applying an event twice,
 * or an older version after a newer one, changes nothing, so at-least-once
 * delivery is safe.
 */
export async function consumeHistory(bus: Bus, db: Knex, logger: Logger, checkEveryMs: number, now: () => number, queued: () => void): Promise<Stoppable> {
  let generation = await historyGeneration(db);
  let consumers = await consumeGeneration(bus, db, logger, generation, now, queued);
  // A rebuild (startNewGeneration, from the command line) is noticed here, so
  // every replica moves to the new consumers without a restart.
  const checking = runEvery(
    checkEveryMs,
    async () => {
      const latest = await historyGeneration(db);
      if (latest === generation) return;
      await consumers.stop();
      // Should the new consumers fail to start, the next check tries again.
      consumers = { stop: async () => {} };
      consumers = await consumeGeneration(bus, db, logger, latest, now, queued);
      generation = latest;
      logger.info({ generation }, "history rebuild: reading the streams again from their first event");
    },
    (err) => logger.warn({ err }, "could not check the history generation; trying again"),
  );
  return {
    stop: async () => {
      await checking.stop();
      await consumers.stop();
    },
  };
}

const MEETINGS_PER_BATCH = 100;

async function consumeGeneration(bus: Bus, db: Knex, logger: Logger, generation: number, now: () => number, queued: () => void): Promise<Stoppable> {
  const names = consumerNames(generation);
  // What is waiting goes in one statement: a backlog (a busy minute, a rebuild) costs few round trips.
  const meetings = await bus.consumeBatches({ durable: names.meetings, events: meetingEvents, maxBatch: MEETINGS_PER_BATCH }, async (messages) => {
    const events: MeetingEvent[] = messages.map((m) => m.payload);
    // A series counts as its occurrences; those a new rule or time removed stop counting.
    const stored = await occurrenceIdsOf(db, events.filter(isWholeSeries).map((e) => e.meetingId));
    const touched = await saveMeetings(db, events.flatMap((e) => storedMeetingsOf(e, now(), stored.get(e.meetingId))));
    logger.debug({ meetings: messages.length, queued: touched.length }, "meeting history updated");
    if (touched.length > 0) queued();
  });
  const people = await bus.consume({ durable: names.people, events: [userCreated, userUpdated] }, async (message) => {
    const event = message.payload;
    const person: KnownPerson = {
      userId: event.userId,
      email: event.email.toLowerCase(),
      name: event.name,
      timezone: event.timezone,
      preferences: event.preferences ?? null,
    };
    const saved = await savePerson(db, { ...person, updatedAt: new Date(event.occurredAt) });
    // A new zone moves every local hour; a new account or e-mail makes meetings seen before theirs.
    if (!saved.relearn) return;
    await queueRelearningEveryMode(db, person.email);
    queued();
  });
  return {
    stop: async () => {
      await meetings.stop();
      await people.stop();
    },
  };
}
