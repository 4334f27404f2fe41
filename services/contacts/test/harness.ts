import { rejection } from "@sched/testing";
import { bind, MemoryBus, type Stoppable } from "@sched/bus";
import type { Knex } from "@sched/db";
import type { AppError } from "@sched/errors";
import { newId } from "@sched/ids";
import { createLogger } from "@sched/logging";
import { accountsLookupUsers, NO_PREFERENCES, userCreated, userUpdated, type Caller, type Endpoint, type Mode, type ReplyOf, type RequestOf, SCOPES, type UserProfile } from "@sched/proto";
import { createTestDatabase } from "@sched/testing";
import { startModule } from "@sched/runtime";
import { contactsService } from "../src/index.js";

/** A user as the tests know them: what accounts would hold. */
export interface TestUser {
  userId: string;
  email: string;
  name: string;
}

let counter = 0;
export function makeUser(name = "Someone"): TestUser {
  counter += 1;
  return { userId: newId("usr"), email: `user${counter}-${newId("usr").slice(4, 12).toLowerCase()}@example.com`, name };
}

export function callerFor(user: TestUser, mode: Mode = "test"): Caller {
  return { userId: user.userId, email: user.email, timezone: "UTC", mode, scopes: [...SCOPES], apiKeyId: newId("key") };
}

/**
 * Stands in for the accounts service on the same bus: answers the user lookup
 * from a map, and publishes real account events. `hang` makes it take the
 * lookup and never answer, as an overloaded accounts would.
 */
class AccountsDouble {
  readonly users = new Map<string, UserProfile>();
  private served: Stoppable | undefined;
  private hanging = false;
  private release: () => void = () => {};
  private released: Promise<void> = Promise.resolve();

  constructor(private readonly bus: MemoryBus) {}

  async answer(): Promise<void> {
    await this.silence();
    this.hanging = false;
    this.served = await this.bus.serve({ name: "accounts-double", version: "0.0.0" }, [
      bind(accountsLookupUsers, async ({ emails }) => {
        if (this.hanging) await this.released;
        return { users: (emails ?? []).flatMap((e) => this.users.get(e.toLowerCase()) ?? []) };
      }),
    ]);
  }

  async hang(): Promise<void> {
    await this.answer();
    this.released = new Promise<void>((resolve) => {
      this.release = resolve;
    });
    this.hanging = true;
  }

  async silence(): Promise<void> {
    // Stopping waits for the requests being answered, so hung ones are let go first.
    this.release();
    await this.served?.stop();
    this.served = undefined;
  }

  /** The user exists in accounts, without any event about it. */
  know(user: TestUser): void {
    this.users.set(user.email, { id: user.userId, email: user.email, name: user.name, timezone: "UTC", workingHours: [], preferences: NO_PREFERENCES });
  }

  async publishCreated(user: TestUser): Promise<void> {
    this.know(user);
    await this.bus.publish(userCreated, this.event(user), { msgId: newId("req") });
  }

  async publishUpdated(user: TestUser): Promise<void> {
    this.know(user);
    await this.bus.publish(userUpdated, this.event(user), { msgId: newId("req") });
  }

  async stop(): Promise<void> {
    await this.silence();
  }

  private event(user: TestUser) {
    return { eventId: newId("req"), userId: user.userId, email: user.email, name: user.name, timezone: "UTC", occurredAt: "2026-01-01T00:00:00Z" };
  }
}

export interface ContactsHarness {
  bus: MemoryBus;
  db: Knex;
  accounts: AccountsDouble;
  /** Calls an endpoint as the gateway does, with the caller in the request context. */
  call<E extends Endpoint>(endpoint: E, payload: RequestOf<E>, caller?: Caller): Promise<ReplyOf<E>>;
  /** The AppError a call fails with. */
  failure<E extends Endpoint>(endpoint: E, payload: RequestOf<E>, caller?: Caller): Promise<AppError>;
  stop(): Promise<void>;
}

/** The contacts module on an in-process bus and a fresh Postgres database. */
export async function startContacts(): Promise<ContactsHarness> {
  const database = await createTestDatabase();
  const logger = createLogger({ name: "contacts-test", level: "silent" });
  const bus = new MemoryBus(logger);
  const contacts = await startModule(contactsService, { database: { kind: "postgres", url: database.url, poolMax: 5 }, bus, logger, settings: {} });
  const accounts = new AccountsDouble(bus);
  await accounts.answer();

  const call = <E extends Endpoint>(endpoint: E, payload: RequestOf<E>, caller?: Caller) =>
    bus.request(endpoint, payload, caller ? { caller } : {});

  return {
    bus,
    db: contacts.db,
    accounts,
    call,
    failure: (endpoint, payload, caller) => rejection(call(endpoint, payload, caller), endpoint.subject),
    stop: async () => {
      await accounts.stop();
      await contacts.stop();
      await bus.close();
      await database.drop();
    },
  };
}
