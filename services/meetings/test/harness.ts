import { MemoryBus, type Bus, type EventMessage } from "@sched/bus";
import { openSchema, type DatabaseTarget, type Knex } from "@sched/db";
import { AppError } from "@sched/errors";
import { newId } from "@sched/ids";
import { createLogger } from "@sched/logging";
import { startModule, type StartedModule } from "@sched/runtime";
import {
  SCOPES,
  meetingsCreate,
  meetingsGet,
  meetingsList,
  meetingsRecordResponse,
  meetingsUpdate,
  type Caller,
  type Endpoint,
  type GivenResponse,
  type HttpReply,
  type Meeting,
  type Mode,
  type PayloadOf,
  type meetingUpdated,
} from "@sched/proto";
import { createTestDatabase, overriding, uniqueSuffix } from "@sched/testing";
import { expect } from "vitest";
import { meetingsService } from "../src/index.js";

export const logger = createLogger({ name: "meetings-test", level: "silent" });

/** What the gateway would write back: the reply, or the error envelope of an AppError. */
export interface Answer {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  headers: Record<string, string>;
}

export interface TestMeetings {
  bus: MemoryBus;
  db: Knex;
  /** Restarts the service on the same database, optionally on another bus (e.g. one whose publish fails). */
  restart(bus?: Bus): Promise<void>;
  stopService(): Promise<void>;
  close(): Promise<void>;
}

/** The meetings service on a fresh Postgres database (or PGlite) and an in-process bus, as the runtimes start it. */
export async function startMeetings(options: { target?: "postgres" | "pglite"; bus?: (bus: MemoryBus) => Bus } = {}): Promise<TestMeetings> {
  const database = options.target === "pglite" ? undefined : await createTestDatabase();
  const target: DatabaseTarget = database ? { kind: "postgres", url: database.url } : { kind: "pglite" };
  // Opened here, not by the starter: a restart runs on the same data.
  const db = await openSchema(target, meetingsService.schema, meetingsService.migrations);
  const bus = new MemoryBus(logger);
  const start = (on: Bus) => startModule(meetingsService, { database: { migrated: db }, bus: on, logger, settings: {} });
  let service: StartedModule | undefined = await start(options.bus ? options.bus(bus) : bus);
  return {
    bus,
    db,
    restart: async (other?: Bus) => {
      await service?.stop();
      service = await start(other ?? bus);
    },
    stopService: async () => {
      await service?.stop();
      service = undefined;
    },
    close: async () => {
      await service?.stop();
      await bus.close();
      await db.destroy();
      await database?.drop();
    },
  };
}

/** A bus that behaves like `bus` except for how it publishes. */
/** The bus with `publish` in place of its own, for events published as values and (the outbox relay's) as stored text alike. */
export function withPublish(bus: Bus, publish: Bus["publish"]): Bus {
  return overriding<Bus>(bus, { publish, publishStored: (event, json, options) => publish(event, JSON.parse(json) as never, options) });
}

export function newCaller(overrides: Partial<Caller> = {}): Caller {
  return {
    userId: newId("usr"),
    email: `user-${uniqueSuffix()}@example.com`,
    timezone: "UTC",
    mode: "test",
    scopes: [...SCOPES],
    apiKeyId: newId("key"),
    ...overrides,
  };
}

/** The same user acting with a key of the other mode. */
export function inMode(caller: Caller, mode: Mode): Caller {
  return { ...caller, mode, apiKeyId: newId("key") };
}

/** Calls an HTTP route endpoint exactly as the gateway does, answering errors with their envelope. */
export async function call(
  bus: Bus,
  endpoint: Endpoint,
  request: { params?: unknown; query?: unknown; body?: unknown },
  caller?: Caller,
  headers: Record<string, string> = {},
): Promise<Answer> {
  try {
    const reply = (await bus.request(endpoint, { params: request.params ?? {}, query: request.query ?? {}, body: request.body } as never, {
      ...(caller ? { caller } : {}),
      headers,
    })) as HttpReply;
    return { status: reply.status, body: reply.body, headers: reply.headers ?? {} };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { status: err.status, body: { error: err.toJSON() }, headers: {} };
  }
}

/** Client helpers for the four public routes. */
export function client(bus: Bus) {
  return {
    create: (caller: Caller | undefined, body: unknown, headers?: Record<string, string>) => call(bus, meetingsCreate, { body }, caller, headers),
    get: (caller: Caller | undefined, id: string) => call(bus, meetingsGet, { params: { id } }, caller),
    update: (caller: Caller | undefined, id: string, body: unknown) => call(bus, meetingsUpdate, { params: { id }, body }, caller),
    list: (caller: Caller | undefined, query: Record<string, unknown> = {}) => call(bus, meetingsList, { query }, caller),
  };
}

/** Records an e-mailed answer (meetings.v1.responses.record) in test mode, as invites would send it. */
export function recordAnswer(bus: Bus, organizer: Caller, meetingId: string, email: string, response: GivenResponse, respondedAt: string) {
  return bus.request(meetingsRecordResponse, { mode: "test", meetingId, organizerEmail: organizer.email, email, response, respondedAt, source: "email" });
}

/** Creates a meeting that must succeed and returns it. */
export async function created(bus: Bus, caller: Caller, body: Record<string, unknown>): Promise<Meeting> {
  const answer = await client(bus).create(caller, { title: "Sync", duration: "30 mins", participants: ["someone@example.com"], ...body });
  if (answer.status !== 201) throw new Error(`create failed: ${JSON.stringify(answer.body)}`);
  return answer.body as Meeting;
}

const HOUR = 3_600_000;

/** A second-precision UTC timestamp `hours` from now. */
export function hoursFromNow(hours: number): string {
  return new Date(Math.floor((Date.now() + hours * HOUR) / 1_000) * 1_000).toISOString().replace(".000Z", "Z");
}

/** Every meeting event carries meetingId and sequence; updated has the widest payload. */
type AnyMeetingEvent = PayloadOf<typeof meetingUpdated>;

/**
 * Five meetings, each renamed, and the first, third and fifth cancelled: 13
 * events. Returns the meeting ids in creation order.
 */
export async function makeChanges(bus: Bus): Promise<string[]> {
  const api = client(bus);
  const alice = newCaller();
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const m = await created(bus, alice, { startTime: hoursFromNow(24 + i) });
    ids.push(m.id);
    await api.update(alice, m.id, { title: `Renamed ${i}` });
    if (i % 2 === 0) await api.update(alice, m.id, { status: "cancelled" });
  }
  return ids;
}

/** The events of makeChanges arrived once per (meeting, sequence), each meeting's in sequence order. */
export function expectExactlyOncePerSequence(received: EventMessage[], ids: string[]): void {
  const seen = received.map((m) => `${(m.payload as AnyMeetingEvent).meetingId}#${(m.payload as AnyMeetingEvent).sequence}`);
  const expected = ids.flatMap((id, i) => (i % 2 === 0 ? [`${id}#1`, `${id}#2`, `${id}#3`] : [`${id}#1`, `${id}#2`]));
  expect([...seen].sort()).toEqual([...expected].sort());
  for (const id of ids) {
    const sequences = received.filter((m) => (m.payload as AnyMeetingEvent).meetingId === id).map((m) => (m.payload as AnyMeetingEvent).sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
  }
}
