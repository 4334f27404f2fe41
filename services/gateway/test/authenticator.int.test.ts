import { bind, MemoryBus } from "@sched/bus";
import { AppError } from "@sched/errors";
import { hashApiKey } from "@sched/ids";
import { createLogger } from "@sched/logging";
import { accountsAuthenticate, callerChanged, invitesCalendarConnected, keyRevoked, type Caller } from "@sched/proto";
import { eventually } from "@sched/testing";
import { describe, expect, it } from "vitest";
import { Authenticator } from "../src/outbound/keys/authenticator.js";

const logger = createLogger({ name: "authenticator-test", level: "silent" });
const key = `sk_test_${"A".repeat(40)}`;
const caller: Caller = { userId: "usr_1", email: "a@example.com", timezone: "UTC", mode: "test", scopes: ["meetings:read"], apiKeyId: "key_1" };

/** Accounts on an in-memory bus, answering each look-up once `release` is called, and counting them; `revoked` answers 401. */
async function accounts(options: { cacheTtlMs?: number; now?: () => number; revoked?: () => boolean } = {}) {
  const bus = new MemoryBus(logger);
  const asked: Array<() => void> = [];
  await bus.serve({ name: "accounts", version: "1.0.0" }, [
    bind(accountsAuthenticate, async () => {
      await new Promise<void>((resolve) => asked.push(resolve));
      if (options.revoked?.()) throw new AppError("unauthorized", "Invalid API key.");
      return { caller };
    }),
  ]);
  const authenticator = new Authenticator(bus, { cacheTtlMs: options.cacheTtlMs ?? 60_000, timeoutMs: 5_000, ...(options.now ? { now: options.now } : {}) });
  await authenticator.listen();
  return { bus, authenticator, asked, release: () => asked.forEach((answer) => answer()) };
}

describe("the gateway's authenticator", () => {
  it("reads and hashes a key once: a malformed one is refused without asking anyone, a known one is answered from the cache", async () => {
    const { authenticator, asked, release } = await accounts();
    expect(authenticator.present(undefined)).toMatchObject({ refusal: { code: "unauthorized" } });
    expect(authenticator.present("Bearer sk_test_short")).toMatchObject({ refusal: { code: "unauthorized" } });
    const presented = authenticator.present(`Bearer ${key}`);
    expect(presented).toEqual({ keyHash: hashApiKey(key) });
    const answer = authenticator.authenticate(presented);
    await eventually(() => asked.length === 1);
    release();
    expect(await answer).toEqual(caller);
    expect(authenticator.present(`Bearer ${key}`)).toEqual({ caller });
  });

  it("asks accounts once for requests that find the same key unknown together", async () => {
    const { authenticator, asked, release } = await accounts();
    const answers = Array.from({ length: 20 }, () => authenticator.authenticate(authenticator.present(`Bearer ${key}`)));
    await eventually(() => asked.length === 1);
    release();
    expect(await Promise.all(answers)).toEqual(Array.from({ length: 20 }, () => caller));
    expect(asked).toHaveLength(1);
  });

  it("keeps no answer that was on its way when the key was revoked: the next request asks again", async () => {
    const { bus, authenticator, asked } = await accounts();
    const before = authenticator.authenticate(authenticator.present(`Bearer ${key}`));
    await eventually(() => asked.length === 1);
    await bus.notify(keyRevoked, { apiKeyId: "key_1", keyHash: hashApiKey(key) });
    const after = authenticator.authenticate(authenticator.present(`Bearer ${key}`));
    await eventually(() => asked.length === 2);
    asked[0]!();
    expect(await before).toEqual(caller);
    expect(authenticator.present(`Bearer ${key}`)).toEqual({ keyHash: hashApiKey(key) });
    asked[1]!();
    expect(await after).toEqual(caller);
    expect(authenticator.present(`Bearer ${key}`)).toEqual({ caller });
  });

  it("says whether the user has a calendar connection as invites answers, and keeps no 'none' answered while a connection was made", async () => {
    const { bus, authenticator, asked, release } = await accounts();
    let connected = false;
    const invitesAsked: Array<() => void> = [];
    await bus.serve({ name: "invites", version: "1.0.0" }, [
      bind(invitesCalendarConnected, async () => {
        const answer = connected;
        await new Promise<void>((resolve) => invitesAsked.push(resolve));
        return { connected: answer };
      }),
    ]);
    const present = () => authenticator.present(`Bearer ${key}`);
    const before = authenticator.authenticate(present());
    await eventually(() => asked.length === 1);
    release();
    await eventually(() => invitesAsked.length === 1);
    // The connection is made (and announced) after invites read "none", before its answer arrives.
    connected = true;
    await bus.notify(callerChanged, { userId: caller.userId });
    invitesAsked[0]!();
    expect(await before).toEqual({ ...caller, calendarConnected: false });
    expect(present()).toEqual({ keyHash: hashApiKey(key) });

    const after = authenticator.authenticate(present());
    await eventually(() => asked.length === 2);
    release();
    await eventually(() => invitesAsked.length === 2);
    invitesAsked[1]!();
    expect(await after).toEqual({ ...caller, calendarConnected: true });
    expect(present()).toEqual({ caller: { ...caller, calendarConnected: true } });
  });

  it("leaves it unknown when invites does not answer, so that the day view asks", async () => {
    const { authenticator, asked, release } = await accounts();
    const answer = authenticator.authenticate(authenticator.present(`Bearer ${key}`));
    await eventually(() => asked.length === 1);
    release();
    expect(await answer).toEqual(caller);
  });

  it("asks again for a busy key past half its age while its entry still serves, once, and keeps it from expiring", async () => {
    let now = 0;
    const { authenticator, asked, release } = await accounts({ cacheTtlMs: 1_000, now: () => now });
    const first = authenticator.authenticate(authenticator.present(`Bearer ${key}`));
    await eventually(() => asked.length === 1);
    release();
    await first;
    now = 499;
    expect(authenticator.present(`Bearer ${key}`)).toEqual({ caller });
    expect(asked).toHaveLength(1);
    now = 500;
    for (let i = 0; i < 5; i++) expect(authenticator.present(`Bearer ${key}`)).toEqual({ caller });
    await eventually(() => asked.length === 2);
    release();
    // Past the first answer's age, the second one serves (and is itself due for renewal).
    now = 1_200;
    await eventually(() => "caller" in authenticator.present(`Bearer ${key}`));
    expect(asked).toHaveLength(3);
  });

  it("forgets at once a key that accounts no longer knows when asked again, revocation notice or not", async () => {
    let now = 0;
    let revoked = false;
    const { authenticator, asked, release } = await accounts({ cacheTtlMs: 1_000, now: () => now, revoked: () => revoked });
    const first = authenticator.authenticate(authenticator.present(`Bearer ${key}`));
    await eventually(() => asked.length === 1);
    release();
    await first;
    revoked = true;
    now = 600;
    expect(authenticator.present(`Bearer ${key}`)).toEqual({ caller });
    await eventually(() => asked.length === 2);
    release();
    await eventually(() => "keyHash" in authenticator.present(`Bearer ${key}`));
  });
});
