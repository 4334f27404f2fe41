import type { Bus, Stoppable } from "@sched/bus";
import type { Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import { DURATION_MINUTES, meetingEvents, userCreated, userUpdated, type meetingCreated, type PayloadOf } from "@sched/proto";
import { runEvery } from "./periodic.js";
import { historyGeneration, queueRelearningEveryMode, saveMeetings, savePerson, type KnownPerson, type StoredMeeting } from "../db/queries.js";

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
export async function consumeHistory(bus: Bus, db: Knex, logger: Logger, checkEveryMs: number): Promise<Stoppable> {
  let generation = await historyGeneration(db);
  let consumers = await consumeGeneration(bus, db, logger, generation);
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
      consumers = await consumeGeneration(bus, db, logger, latest);
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

/** What ai-ranking keeps of a meeting event (the bus checked it against its schema; the three events share these fields). */
function storedMeetingOf(event: PayloadOf<typeof meetingCreated>): StoredMeeting {
  const start = Date.parse(event.meeting.startTime);
  return {
    meetingId: event.meetingId,
    mode: event.mode,
    sequence: event.sequence,
    confirmed: event.meeting.status === "confirmed",
    start: new Date(start),
    end: new Date(start + DURATION_MINUTES[event.meeting.duration] * 60_000),
    scheduledAt: new Date(event.meeting.createdAt),
    attendees: [...new Set([event.organizer.email, ...event.meeting.participants].map((e) => e.toLowerCase()))],
  };
}

async function consumeGeneration(bus: Bus, db: Knex, logger: Logger, generation: number): Promise<Stoppable> {
  const names = consumerNames(generation);
  // What is waiting goes in one statement: a backlog (a busy minute, a rebuild) costs few round trips.
  const meetings = await bus.consumeBatches({ durable: names.meetings, events: meetingEvents, maxBatch: MEETINGS_PER_BATCH }, async (messages) => {
    const touched = await saveMeetings(db, messages.map((m) => storedMeetingOf(m.payload as PayloadOf<typeof meetingCreated>)));
    logger.debug({ meetings: messages.length, queued: touched.length }, "meeting history updated");
  });
  const people = await bus.consume({ durable: names.people, events: [userCreated, userUpdated] }, async (message) => {
    const event = message.payload as PayloadOf<typeof userCreated>;
    const person: KnownPerson = {
      userId: event.userId,
      email: event.email.toLowerCase(),
      name: event.name,
      timezone: event.timezone,
      preferences: event.preferences ?? null,
    };
    const saved = await savePerson(db, { ...person, updatedAt: new Date(event.occurredAt) });
    // A new zone moves every local hour; a new account or e-mail makes meetings seen before theirs.
    if (saved.relearn) await queueRelearningEveryMode(db, person.email);
  });
  return {
    stop: async () => {
      await meetings.stop();
      await people.stop();
    },
  };
}
