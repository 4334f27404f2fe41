import { MemoryBus } from "@sched/bus";
import { openSchema, type Knex } from "@sched/db";
import { newId } from "@sched/ids";
import { createLogger } from "@sched/logging";
import { startModule, type StartedModule } from "@sched/runtime";
import { meetingCancelled, meetingCreated, userCreated, userUpdated, type Mode, type Preferences } from "@sched/proto";
import { createTestDatabase } from "@sched/testing";
import { aiRankingService, serveAiRanking } from "../src/index.js";
import { iso } from "./people.js";

export interface TestPerson {
  userId: string;
  email: string;
  name: string;
  timezone: string;
}

export function makePerson(name: string, timezone = "UTC"): TestPerson {
  const id = newId("usr");
  return { userId: id, email: `${name.toLowerCase()}-${id.slice(4, 12).toLowerCase()}@example.com`, name, timezone };
}


/** The ai-ranking module on an in-process bus and a fresh Postgres database, fed with real events. */
export class AiRankingHarness {
  private sequence = new Map<string, number>();
  private handle: StartedModule | undefined;

  private constructor(
    readonly bus: MemoryBus,
    readonly db: Knex,
    private readonly drop: () => Promise<void>,
    readonly now: () => number,
    private readonly env: Record<string, string>,
  ) {}

  static async start(options: { now?: () => number; env?: Record<string, string> } = {}): Promise<AiRankingHarness> {
    const database = await createTestDatabase();
    const logger = createLogger({ name: "ai-ranking-test", level: "silent" });
    const bus = new MemoryBus(logger);
    // Opened here, not by the starter: a restart runs on the same data.
    const db = await openSchema({ kind: "postgres", url: database.url, poolMax: 5 }, aiRankingService.schema, aiRankingService.migrations);
    const harness = new AiRankingHarness(bus, db, database.drop, options.now ?? Date.now, options.env ?? {});
    await harness.startService();
    return harness;
  }

  async startService(): Promise<void> {
    const logger = createLogger({ name: "ai-ranking-test", level: "silent" });
    // The module as the runtimes start it, on the harness's clock.
    const onClock = { ...aiRankingService, start: (deps: Parameters<typeof aiRankingService.start>[0]) => serveAiRanking(deps, this.now) };
    this.handle = await startModule(onClock, { database: { migrated: this.db }, bus: this.bus, logger, settings: this.env });
  }

  async stopService(): Promise<void> {
    await this.handle?.stop();
    this.handle = undefined;
  }

  async account(person: TestPerson, preferences?: Preferences, updated = false): Promise<void> {
    const event = updated ? userUpdated : userCreated;
    await this.bus.publish(
      event,
      { eventId: newId("req"), userId: person.userId, email: person.email, name: person.name, timezone: person.timezone, ...(preferences ? { preferences } : {}), occurredAt: iso(Date.now()) },
      { msgId: newId("req") },
    );
  }

  /** A confirmed meeting organized by `organizer`; returns its id. */
  async meeting(organizer: TestPerson, participants: readonly TestPerson[], start: number, options: { mode?: Mode; duration?: "30 mins" | "1 hour"; title?: string } = {}): Promise<string> {
    const meetingId = newId("mtg");
    this.sequence.set(meetingId, 1);
    await this.bus.publish(meetingCreated, this.payload(meetingId, organizer, participants, start, options, "confirmed"), { msgId: newId("req") });
    return meetingId;
  }

  async cancel(meetingId: string, organizer: TestPerson, participants: readonly TestPerson[], start: number): Promise<void> {
    const sequence = (this.sequence.get(meetingId) ?? 1) + 1;
    this.sequence.set(meetingId, sequence);
    await this.bus.publish(
      meetingCancelled,
      { ...this.payload(meetingId, organizer, participants, start, {}, "cancelled"), changedFields: ["status"], previousStatus: "confirmed", previousParticipants: participants.map((p) => p.email) },
      { msgId: newId("req") },
    );
  }

  private payload(meetingId: string, organizer: TestPerson, participants: readonly TestPerson[], start: number, options: { mode?: Mode; duration?: "30 mins" | "1 hour"; title?: string }, status: "confirmed" | "cancelled") {
    return {
      eventId: newId("req"),
      meetingId,
      mode: options.mode ?? "test",
      organizer: { userId: organizer.userId, email: organizer.email },
      meeting: {
        id: meetingId,
        title: options.title ?? "Planning",
        description: "",
        startTime: iso(start),
        duration: options.duration ?? "1 hour",
        participants: participants.map((p) => p.email),
        status,
        organizer: organizer.email,
        createdAt: iso(start - 3 * 86_400_000),
        attendees: [],
        recurrence: null, seriesId: null, originalStartTime: null,
      },
      sequence: this.sequence.get(meetingId) ?? 1,
      sendInvites: false,
      occurredAt: iso(start - 3 * 86_400_000),
    };
  }

  async stop(): Promise<void> {
    await this.stopService();
    await this.bus.close();
    await this.db.destroy();
    await this.drop();
  }
}
