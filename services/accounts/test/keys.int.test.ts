import { hashApiKey, newId } from "@sched/ids";
import {
  SCOPES,
  accountsAdminCreateKey,
  accountsAdminCreateUser,
  accountsAdminRevokeKey,
  accountsAdminUpdateKey,
  accountsAuthenticate,
  keyChanged,
  keyRevoked,
  type PayloadOf,
} from "@sched/proto";
import { eventually } from "@sched/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAccounts, uniqueEmail, type AccountsHarness } from "./harness.js";

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

interface CreatedKey {
  id: string;
  key: string;
  mode: string;
  scopes: string[];
  name: string | null;
  createdAt: string;
}

describe("API keys and authentication, against Postgres", () => {
  let h: AccountsHarness;
  const notices: PayloadOf<typeof keyRevoked>[] = [];
  const changes: PayloadOf<typeof keyChanged>[] = [];
  beforeAll(async () => {
    h = await startAccounts();
    await h.bus.onNotice(keyRevoked, (n) => void notices.push(n));
    await h.bus.onNotice(keyChanged, (n) => void changes.push(n));
  });
  afterAll(async () => h?.stop());

  const newUser = async (timezone?: string) => {
    const email = uniqueEmail();
    const reply = await h.call(accountsAdminCreateUser, { params: {}, query: {}, body: { email, name: "Kay", ...(timezone ? { timezone } : {}) } });
    return { id: (reply.body as { id: string }).id, email };
  };
  const createKey = async (userId: string, body: { mode: "test" | "live"; scopes?: (typeof SCOPES)[number][]; name?: string }) => {
    const reply = await h.call(accountsAdminCreateKey, { params: { id: userId }, query: {}, body });
    expect(reply.status).toBe(201);
    return reply.body as CreatedKey;
  };
  const revoke = (id: string) => h.call(accountsAdminRevokeKey, { params: { id }, query: {}, body: undefined });

  describe("creating a key", () => {
    it("when a key is created without scopes or name, then 201 with the key once, all scopes and no name", async () => {
      const user = await newUser();
      const created = await createKey(user.id, { mode: "test" });
      expect(Object.keys(created).sort()).toEqual(["createdAt", "id", "key", "mode", "name", "scopes"]);
      expect(created.id).toMatch(/^key_[0-9A-Za-z]{24}$/);
      expect(created.key).toMatch(/^sk_test_[0-9A-Za-z]{40}$/);
      expect(created).toMatchObject({ mode: "test", scopes: [...SCOPES], name: null });
      expect(created.createdAt).toMatch(TIMESTAMP);
    });

    it("when a live key is created with scopes and a name, then it has exactly those", async () => {
      const user = await newUser();
      const created = await createKey(user.id, { mode: "live", scopes: ["contacts:read", "meetings:read"], name: " CI server " });
      expect(created.key).toMatch(/^sk_live_[0-9A-Za-z]{40}$/);
      expect(created).toMatchObject({ mode: "live", scopes: ["meetings:read", "contacts:read"], name: "CI server" });
    });

    it("when a key is created, then only its hash is stored, never the key", async () => {
      const user = await newUser();
      const created = await createKey(user.id, { mode: "live" });
      const row = await h.db("api_keys").where({ id: created.id }).first();
      expect(row).toMatchObject({ user_id: user.id, key_hash: hashApiKey(created.key), mode: "live", revoked_at: null, rate_limit_standard: null, rate_limit_ai: null });
      expect(row.hint).toBe(`${created.key.slice(0, 12)}…`);
      const everything = (await h.db.raw("select coalesce(string_agg(t::text, ' '), '') as text from api_keys t")).rows[0].text as string;
      expect(everything).toContain(created.id);
      expect(everything).not.toContain(created.key);
      expect(everything).not.toContain(created.key.slice(12));
    });

    it("when the user does not exist or the id has the wrong shape, then 404", async () => {
      for (const id of [newId("usr"), "usr_123", newId("key")]) {
        const err = await h.failure(accountsAdminCreateKey, { params: { id }, query: {}, body: { mode: "test" } });
        expect(err).toMatchObject({ code: "not_found", status: 404 });
      }
    });

    it("when the mode or a scope is unknown, then 400 naming it", async () => {
      const user = await newUser();
      const mode = await h.failure(accountsAdminCreateKey, { params: { id: user.id }, query: {}, body: { mode: "prod" } } as never);
      expect(mode.details.param).toBe("mode");
      const scope = await h.failure(accountsAdminCreateKey, { params: { id: user.id }, query: {}, body: { mode: "test", scopes: ["meetings:read", "admin"] } } as never);
      expect(scope.details.param).toBe("scopes[1]");
      const none = await h.failure(accountsAdminCreateKey, { params: { id: user.id }, query: {}, body: { mode: "test", scopes: [] } });
      expect(none.details.param).toBe("scopes");
    });
  });

  describe("authenticating", () => {
    it("when a key is known, then the caller it acts for comes back", async () => {
      const user = await newUser("Europe/Berlin");
      const created = await createKey(user.id, { mode: "live", scopes: ["account:read"] });
      const { caller } = await h.call(accountsAuthenticate, { keyHash: hashApiKey(created.key) });
      expect(caller).toEqual({
        userId: user.id,
        email: user.email,
        timezone: "Europe/Berlin",
        mode: "live",
        scopes: ["account:read"],
        apiKeyId: created.id,
        rateLimits: { standardPerMinute: null, aiPerMinute: null },
        // A new user's: Monday to Friday, 09:00–17:00.
        workingHours: ["monday", "tuesday", "wednesday", "thursday", "friday"].map((day) => ({ day, start: "09:00", end: "17:00" })),
      });
    });

    it("when a key is unknown, then 401 Invalid API key", async () => {
      const err = await h.failure(accountsAuthenticate, { keyHash: hashApiKey("sk_test_0123456789abcdefghijklmnopqrstuv") });
      expect(err).toMatchObject({ code: "unauthorized", status: 401, message: "Invalid API key." });
    });

    it("when the hash is malformed, then 400", async () => {
      const err = await h.failure(accountsAuthenticate, { keyHash: "sk_test_plaintext" });
      expect(err).toMatchObject({ code: "invalid_request", status: 400 });
    });
  });

  describe("revoking", () => {
    it("when a key is revoked, then 200, authentication fails with the unknown-key message, and gateways are told", async () => {
      const user = await newUser();
      const created = await createKey(user.id, { mode: "test" });
      const other = await createKey(user.id, { mode: "test" });
      const keyHash = hashApiKey(created.key);
      expect((await h.call(accountsAuthenticate, { keyHash })).caller.apiKeyId).toBe(created.id);

      expect(await revoke(created.id)).toEqual({ status: 200, body: { id: created.id, revoked: true } });
      const err = await h.failure(accountsAuthenticate, { keyHash });
      expect(err).toMatchObject({ code: "unauthorized", status: 401, message: "Invalid API key." });
      await eventually(() => notices.some((n) => n.apiKeyId === created.id));
      expect(notices.filter((n) => n.apiKeyId === created.id)).toEqual([{ apiKeyId: created.id, keyHash }]);
      // The user's other key still works.
      expect((await h.call(accountsAuthenticate, { keyHash: hashApiKey(other.key) })).caller.apiKeyId).toBe(other.id);
    });

    it("when a key is revoked twice, then both answer 200 and the first revocation time stays", async () => {
      const user = await newUser();
      const created = await createKey(user.id, { mode: "test" });
      await revoke(created.id);
      const first = (await h.db("api_keys").where({ id: created.id }).first()).revoked_at as Date;
      expect(first).toBeInstanceOf(Date);
      expect(await revoke(created.id)).toEqual({ status: 200, body: { id: created.id, revoked: true } });
      expect((await h.db("api_keys").where({ id: created.id }).first()).revoked_at).toEqual(first);
      await eventually(() => notices.filter((n) => n.apiKeyId === created.id).length === 2);
    });

    it("when the key does not exist or the id has the wrong shape, then 404", async () => {
      for (const id of [newId("key"), "key_nope", newId("usr")]) {
        const err = await h.failure(accountsAdminRevokeKey, { params: { id }, query: {}, body: undefined });
        expect(err).toMatchObject({ code: "not_found", status: 404 });
      }
    });
  });

  describe("a key's own rate limits", () => {
    const setLimits = (id: string, rateLimits: Record<string, unknown>) => h.call(accountsAdminUpdateKey, { params: { id }, query: {}, body: { rateLimits } as never });
    const limitsOf = async (key: CreatedKey) => (await h.call(accountsAuthenticate, { keyHash: hashApiKey(key.key) })).caller.rateLimits;

    it("when limits are set, then the key shows them, authentication carries them and gateways are told", async () => {
      const user = await newUser();
      const created = await createKey(user.id, { mode: "live", scopes: ["meetings:read"], name: "big customer" });
      const reply = await setLimits(created.id, { standardPerMinute: 5000, aiPerMinute: 50 });
      expect(reply).toEqual({
        status: 200,
        body: {
          id: created.id,
          mode: "live",
          scopes: ["meetings:read"],
          name: "big customer",
          rateLimits: { standardPerMinute: 5000, aiPerMinute: 50 },
          createdAt: created.createdAt,
          revokedAt: null,
        },
      });
      expect(await limitsOf(created)).toEqual({ standardPerMinute: 5000, aiPerMinute: 50 });
      await eventually(() => changes.some((n) => n.apiKeyId === created.id));
      expect(changes.filter((n) => n.apiKeyId === created.id)).toEqual([{ apiKeyId: created.id, keyHash: hashApiKey(created.key) }]);
    });

    it("when one bucket is given, the other stays; null returns a bucket to the default", async () => {
      const user = await newUser();
      const created = await createKey(user.id, { mode: "test" });
      await setLimits(created.id, { standardPerMinute: 300, aiPerMinute: 20 });
      await setLimits(created.id, { aiPerMinute: 40 });
      expect(await limitsOf(created)).toEqual({ standardPerMinute: 300, aiPerMinute: 40 });
      await setLimits(created.id, { standardPerMinute: null });
      expect(await limitsOf(created)).toEqual({ standardPerMinute: null, aiPerMinute: 40 });
      const unchanged = await setLimits(created.id, {});
      expect((unchanged.body as { rateLimits: unknown }).rateLimits).toEqual({ standardPerMinute: null, aiPerMinute: 40 });
    });

    it("when a limit is not a whole number from 1 to 1,000,000 or a field is unknown, then 400 naming it and nothing changes", async () => {
      const user = await newUser();
      const created = await createKey(user.id, { mode: "test" });
      await setLimits(created.id, { standardPerMinute: 7 });
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ standardPerMinute: 0 }, "rateLimits.standardPerMinute"],
        [{ standardPerMinute: -5 }, "rateLimits.standardPerMinute"],
        [{ aiPerMinute: 1.5 }, "rateLimits.aiPerMinute"],
        [{ aiPerMinute: 1_000_001 }, "rateLimits.aiPerMinute"],
        [{ standardPerMinute: "100" }, "rateLimits.standardPerMinute"],
        [{ perHour: 5 }, "rateLimits.perHour"],
      ];
      for (const [limits, param] of cases) {
        const err = await h.failure(accountsAdminUpdateKey, { params: { id: created.id }, query: {}, body: { rateLimits: limits } as never });
        expect(err, JSON.stringify(limits)).toMatchObject({ code: "invalid_request", status: 400, details: { param } });
      }
      expect(await limitsOf(created)).toEqual({ standardPerMinute: 7, aiPerMinute: null });
    });

    it("when the key does not exist or the id has the wrong shape, then 404", async () => {
      for (const id of [newId("key"), "key_nope", newId("usr")]) {
        const err = await h.failure(accountsAdminUpdateKey, { params: { id }, query: {}, body: { rateLimits: { standardPerMinute: 5 } } });
        expect(err).toMatchObject({ code: "not_found", status: 404 });
      }
    });
  });
});
