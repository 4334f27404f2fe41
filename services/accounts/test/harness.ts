import { rejection } from "@sched/testing";
import { MemoryBus, type EventMessageOf, type Stoppable } from "@sched/bus";
import type { Knex } from "@sched/db";
import type { AppError } from "@sched/errors";
import { createLogger } from "@sched/logging";
import {
  accountsAdminCreateKey,
  accountsAdminCreateUser,
  accountsAuthenticate,
  userCreated,
  userUpdated,
  type Caller,
  type Endpoint,
  type Mode,
  type ReplyOf,
  type RequestOf,
} from "@sched/proto";
import { createTestDatabase } from "@sched/testing";
import { hashApiKey } from "@sched/ids";
import { startModule } from "@sched/runtime";
import { accountsService } from "../src/index.js";

export interface AccountsHarness {
  bus: MemoryBus;
  db: Knex;
  /** User events published so far, in order. */
  events: EventMessageOf<typeof userCreated | typeof userUpdated>[];
  /** Calls an endpoint as the gateway does: `{params, query, body}`, the caller in the context. */
  call<E extends Endpoint>(endpoint: E, payload: RequestOf<E>, caller?: Caller): Promise<ReplyOf<E>>;
  /** The AppError a call fails with. */
  failure<E extends Endpoint>(endpoint: E, payload: RequestOf<E>, caller?: Caller): Promise<AppError>;
  /** A new user through the admin API, with a key of `mode`, and the caller the key resolves to. */
  userWithKey(options?: { timezone?: string; mode?: Mode }): Promise<{ userId: string; email: string; key: string; keyId: string; caller: Caller }>;
  stop(): Promise<void>;
}

let counter = 0;
/** An e-mail address no other test of the suite uses. */
export function uniqueEmail(name = "user"): string {
  counter += 1;
  return `${name.toLowerCase()}${counter}-${Math.random().toString(36).slice(2, 8)}@example.com`;
}

/** The accounts module on an in-process bus and a fresh Postgres database (or PGlite in memory). */
export async function startAccounts(options: { target?: "postgres" | "pglite" } = {}): Promise<AccountsHarness> {
  const database = options.target === "pglite" ? undefined : await createTestDatabase();
  const logger = createLogger({ name: "accounts-test", level: "silent" });
  const bus = new MemoryBus(logger);
  const accounts = await startModule(accountsService, {
    database: database ? { kind: "postgres", url: database.url, poolMax: 5 } : { kind: "pglite" },
    bus,
    logger,
    settings: {},
  });
  const events: AccountsHarness["events"] = [];
  const consumer: Stoppable = await bus.consume({ durable: "accounts-test", events: [userCreated, userUpdated] }, async (m) => void events.push(m));

  const call = <E extends Endpoint>(endpoint: E, payload: RequestOf<E>, caller?: Caller) => bus.request(endpoint, payload, caller ? { caller } : {});

  return {
    bus,
    db: accounts.db,
    events,
    call,
    failure: (endpoint, payload, caller) => rejection(call(endpoint, payload, caller), endpoint.subject),
    userWithKey: async ({ timezone, mode = "test" } = {}) => {
      const email = uniqueEmail();
      const user = await call(accountsAdminCreateUser, { params: {}, query: {}, body: { email, name: "Key Holder", ...(timezone ? { timezone } : {}) } });
      const userId = (user.body as { id: string }).id;
      const created = await call(accountsAdminCreateKey, { params: { id: userId }, query: {}, body: { mode } });
      const { id: keyId, key } = created.body as { id: string; key: string };
      const { caller } = await call(accountsAuthenticate, { keyHash: hashApiKey(key) });
      return { userId, email, key, keyId, caller };
    },
    stop: async () => {
      await consumer.stop();
      await accounts.stop();
      await bus.close();
      await database?.drop();
    },
  };
}
