import { bind, MemoryBus, type Bus, type Stoppable } from "@sched/bus";
import { contactsService } from "@sched/contacts";
import { openSchema, type Knex } from "@sched/db";
import { AppError } from "@sched/errors";
import { newId } from "@sched/ids";
import { createLogger } from "@sched/logging";
import { meetingsService } from "@sched/meetings";
import { startModule, type ServiceModule } from "@sched/runtime";
import {
  SCOPES,
  accountsLookupUsers,
  availabilityDay,
  availabilityFreeBusy,
  availabilityRecommend,
  contactsCreate,
  contactsUpdate,
  meetingsCreate,
  meetingsUpdate,
  type Caller,
  type Contact,
  type Duration,
  type Endpoint,
  type HttpReply,
  type Meeting,
  type Mode,
  type UserProfile,
  type WorkingHoursEntry,
  NO_PREFERENCES,
} from "@sched/proto";
import { createTestDatabase, overriding, uniqueSuffix } from "@sched/testing";
import type { z } from "zod";
import { availabilityService } from "../src/index.js";
import { serveAvailability } from "../src/service.js";

const logger = createLogger({ name: "availability-test", level: "silent" });

const WORKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday"] as const;

/** Monday to Friday between two local times. */
export function weekdays(start = "09:00", end = "17:00"): WorkingHoursEntry[] {
  return WORKDAYS.map((day) => ({ day, start, end }));
}

/** What the gateway would write back: the reply, or the error envelope of an AppError. */
export interface Answer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/**
 * Stands in for the accounts service (being written elsewhere): answers the
 * user lookup by id and e-mail from an in-test map, as accounts would.
 */
class AccountsDouble {
  private readonly byId = new Map<string, UserProfile>();
  private served: Stoppable | undefined;

  constructor(private readonly bus: Bus) {}

  add(user: UserProfile): void {
    this.byId.set(user.id, user);
  }

  async answer(): Promise<void> {
    this.served = await this.bus.serve({ name: "accounts-double", version: "0.0.0" }, [
      bind(accountsLookupUsers, async ({ ids, emails }) => {
        const wanted = new Set((emails ?? []).map((e) => e.toLowerCase()));
        const idSet = new Set(ids ?? []);
        return { users: [...this.byId.values()].filter((u) => idSet.has(u.id) || wanted.has(u.email.toLowerCase())) };
      }),
    ]);
  }

  async silence(): Promise<void> {
    await this.served?.stop();
    this.served = undefined;
  }
}

/** A bus that behaves like `bus` and remembers the subjects the availability service asked. */
function recordingBus(bus: Bus, asked: string[]): Bus {
  return overriding<Bus>(bus, {
    request: (e, p, o) => {
      asked.push(e.subject);
      return bus.request(e, p, o);
    },
  });
}

export interface World {
  bus: MemoryBus;
  /** The availability handlers' clock (epoch ms); tests may move it. */
  now: number;
  /** Subjects the availability service has asked over the bus, in order. */
  asked: string[];
  user(options?: { name?: string; timezone?: string; workingHours?: WorkingHoursEntry[] }): Promise<UserProfile>;
  callerFor(user: UserProfile, mode?: Mode): Caller;
  /** `owner` adds `other` as a contact, blocked if asked. */
  contact(owner: UserProfile, other: { email: string }, options?: { blocked?: boolean; mode?: Mode }): Promise<Contact>;
  meeting(
    organizer: UserProfile,
    options: { startTime: string; duration: Duration; participants?: string[]; status?: "draft" | "confirmed"; mode?: Mode },
  ): Promise<Meeting>;
  cancel(organizer: UserProfile, meeting: Meeting): Promise<void>;
  day(caller: Caller | undefined, query: Record<string, unknown>): Promise<Answer>;
  recommend(caller: Caller | undefined, body: Record<string, unknown>): Promise<Answer>;
  freeBusy(caller: Caller | undefined, body: Record<string, unknown>): Promise<Answer>;
  /** Starts (or stops) the siblings one at a time, for the "does not answer" cases. */
  siblings: { accounts: { stop(): Promise<void>; start(): Promise<void> }; contacts: { stop(): Promise<void>; start(): Promise<void> }; meetings: { stop(): Promise<void>; start(): Promise<void> } };
  close(): Promise<void>;
}

/**
 * The availability service on an in-process bus with the real contacts and
 * meetings modules (one fresh Postgres database, a schema each) and an
 * accounts double. By default the availability handlers read the World's
 * clock; `realService` starts the module exactly as the runtimes do instead.
 */
export async function startWorld(options: { now?: number; aiRankingTimeoutMs?: number; realService?: boolean } = {}): Promise<World> {
  const database = await createTestDatabase();
  const target = { kind: "postgres" as const, url: database.url, poolMax: 4 };
  const bus = new MemoryBus(logger);
  const contactsDb = await openSchema(target, contactsService.schema, contactsService.migrations);
  const meetingsDb = await openSchema(target, meetingsService.schema, meetingsService.migrations);
  const availabilityDb = await openSchema(target, availabilityService.schema, availabilityService.migrations);
  const dbs: Knex[] = [contactsDb, meetingsDb, availabilityDb];
  // The schemas are opened above, not by the starter: a sibling stopped and started again runs on the same data.
  const start = <S extends z.ZodObject>(module: ServiceModule<S>, db: Knex, on: Bus = bus, settings: Record<string, string> = {}) =>
    startModule(module, { database: { migrated: db }, bus: on, logger, settings });

  const accounts = new AccountsDouble(bus);
  await accounts.answer();
  let contacts: Stoppable | undefined;
  let meetings: Stoppable | undefined;
  const startContacts = async () => {
    contacts = await start(contactsService, contactsDb);
  };
  const startMeetings = async () => {
    meetings = await start(meetingsService, meetingsDb);
  };
  await startContacts();
  await startMeetings();

  const asked: string[] = [];
  const settings: Record<string, string> = options.aiRankingTimeoutMs ? { AI_RANKING_TIMEOUT_MS: String(options.aiRankingTimeoutMs) } : {};
  const world: World = {
    bus,
    now: options.now ?? Date.now(),
    asked,
    async user({ name = "Someone", timezone = "Europe/Berlin", workingHours = weekdays() } = {}) {
      const user = { id: newId("usr"), email: `${name.toLowerCase()}-${uniqueSuffix()}@example.com`, name, timezone, workingHours, preferences: NO_PREFERENCES };
      accounts.add(user);
      return user;
    },
    callerFor(user, mode = "test") {
      return { userId: user.id, email: user.email, timezone: user.timezone, mode, scopes: [...SCOPES], apiKeyId: newId("key") };
    },
    async contact(owner, other, { blocked = false, mode = "test" } = {}) {
      const caller = world.callerFor(owner, mode);
      const created = await bus.request(contactsCreate, { params: {}, query: {}, body: { email: other.email } }, { caller });
      const contact = created.body as Contact;
      if (!blocked) return contact;
      const updated = await bus.request(contactsUpdate, { params: { id: contact.id }, query: {}, body: { blocked: true } }, { caller });
      return updated.body as Contact;
    },
    async meeting(organizer, { startTime, duration, participants = ["guest@elsewhere.example"], status = "confirmed", mode = "test" }) {
      const caller = world.callerFor(organizer, mode);
      const reply = await bus.request(meetingsCreate, { params: {}, query: {}, body: { title: "Meeting", startTime, duration, participants, status, sendInvites: false } }, { caller });
      return reply.body as Meeting;
    },
    async cancel(organizer, meeting) {
      await bus.request(meetingsUpdate, { params: { id: meeting.id }, query: {}, body: { status: "cancelled", sendInvites: false } }, { caller: world.callerFor(organizer) });
    },
    day: (caller, query) => call(bus, availabilityDay, { params: {}, query, body: undefined }, caller),
    recommend: (caller, body) => call(bus, availabilityRecommend, { params: {}, query: {}, body }, caller),
    freeBusy: (caller, body) => call(bus, availabilityFreeBusy, { params: {}, query: {}, body }, caller),
    siblings: {
      accounts: { stop: () => accounts.silence(), start: () => accounts.answer() },
      contacts: { stop: async () => contacts?.stop(), start: startContacts },
      meetings: { stop: async () => meetings?.stop(), start: startMeetings },
    },
    async close() {
      await availability.stop();
      await contacts?.stop();
      await meetings?.stop();
      await accounts.silence();
      await bus.close();
      for (const db of dbs) await db.destroy();
      await database.drop();
    },
  };
  // By default the module on the World's clock.
  const onWorldClock = { ...availabilityService, start: (deps: Parameters<typeof availabilityService.start>[0]) => serveAvailability(deps, () => world.now) };
  const availability = await start(options.realService ? availabilityService : onWorldClock, availabilityDb, recordingBus(bus, asked), settings);
  return world;
}

async function call(bus: Bus, endpoint: Endpoint, payload: unknown, caller: Caller | undefined): Promise<Answer> {
  try {
    const reply = (await bus.request(endpoint, payload as never, caller ? { caller } : {})) as HttpReply;
    return { status: reply.status, body: reply.body };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { status: err.status, body: { error: err.toJSON() } };
  }
}
