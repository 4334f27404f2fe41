import type { Bus, Stoppable } from "@sched/bus";
import type { Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import { DURATION_MINUTES, meetingEvents, userCreated, userUpdated, type meetingCreated, type Mode, type PayloadOf } from "@sched/proto";
import { HISTORY_DAYS, learnPatterns } from "../domain/patterns.js";
import { historyGeneration, historyOf, modesOf, peopleByEmails, saveMeeting, savePatterns, savePerson, type KnownPerson } from "../db/queries.js";

/** Durable consumer names of one generation; a rebuild moves to the next, which reads from the first event. */
export function consumerNames(generation: number): { meetings: string; people: string } {
  return { meetings: `ai-ranking-meetings-g${generation}`, people: `ai-ranking-people-g${generation}` };
}

/**
 * Keeps the history ai-ranking learns from: every meeting's latest version
 * (times, status and who attends, never the title) and every account's
 * e-mail, name, zone and preferences. Each change re-learns the patterns of
 * the people it touches. Applying an event twice, or an older version after
 * a newer one, changes nothing, so at-least-once delivery is safe.
 */
export async function consumeHistory(bus: Bus, db: Knex, logger: Logger, now: () => number, checkEveryMs: number): Promise<Stoppable> {
  let generation = await historyGeneration(db);
  let consumers = await consumeGeneration(bus, db, logger, now, generation);
  // A rebuild (startNewGeneration, from the command line) is noticed here, so
  // every replica moves to the new consumers without a restart.
  let checking = Promise.resolve();
  const timer = setInterval(() => {
    checking = checking
      .then(async () => {
        const latest = await historyGeneration(db);
        if (latest === generation) return;
        await consumers.stop();
        // Should the new consumers fail to start, the next check tries again.
        consumers = { stop: async () => {} };
        consumers = await consumeGeneration(bus, db, logger, now, latest);
        generation = latest;
        logger.info({ generation }, "history rebuild: reading the streams again from their first event");
      })
      .catch((err: unknown) => logger.warn({ err }, "could not check the history generation; trying again"));
  }, checkEveryMs);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await checking;
      await consumers.stop();
    },
  };
}

async function consumeGeneration(bus: Bus, db: Knex, logger: Logger, now: () => number, generation: number): Promise<Stoppable> {
  const names = consumerNames(generation);
  const meetings = await bus.consume({ durable: names.meetings, events: meetingEvents }, async (message) => {
    // The bus checked the payload against its event's schema; the three events share these fields.
    const event = message.payload as PayloadOf<typeof meetingCreated>;
    const start = Date.parse(event.meeting.startTime);
    const attendees = [...new Set([event.organizer.email, ...event.meeting.participants].map((e) => e.toLowerCase()))];
    const touched = await saveMeeting(db, {
      meetingId: event.meetingId,
      mode: event.mode,
      sequence: event.sequence,
      confirmed: event.meeting.status === "confirmed",
      start: new Date(start),
      end: new Date(start + DURATION_MINUTES[event.meeting.duration] * 60_000),
      scheduledAt: new Date(event.meeting.createdAt),
      attendees,
    });
    const people = await peopleByEmails(db, touched);
    for (const person of people) await relearn(db, person, event.mode, now());
    logger.debug({ meetingId: event.meetingId, relearned: people.length }, "meeting history updated");
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
    if (!(await savePerson(db, { ...person, updatedAt: new Date(event.occurredAt) }))) return;
    // A new zone moves every local hour; meetings seen before the account are now theirs.
    for (const mode of await modesOf(db, person.email)) await relearn(db, person, mode, now());
  });
  return {
    stop: async () => {
      await meetings.stop();
      await people.stop();
    },
  };
}

export async function relearn(db: Knex, person: KnownPerson, mode: Mode, now: number): Promise<void> {
  const history = await historyOf(db, person.email, mode, new Date(now - HISTORY_DAYS * 86_400_000));
  await savePatterns(db, person.userId, mode, learnPatterns(history, person.timezone));
}
