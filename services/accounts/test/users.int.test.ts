import { newId } from "@sched/ids";
import { accountsAdminCreateUser, accountsAdminFindUsers, accountsLookupUsers, NO_PREFERENCES } from "@sched/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAccounts, uniqueEmail, type AccountsHarness } from "./harness.js";

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const DEFAULT_HOURS = ["monday", "tuesday", "wednesday", "thursday", "friday"].map((day) => ({ day, start: "09:00", end: "17:00" }));

interface AdminUser {
  id: string;
  email: string;
  name: string;
  timezone: string;
  createdAt: string;
}

describe("users through the admin API, against Postgres", () => {
  let h: AccountsHarness;
  beforeAll(async () => {
    h = await startAccounts();
  });
  afterAll(async () => h?.stop());

  const create = async (body: { email: string; name: string; timezone?: string }) => {
    const reply = await h.call(accountsAdminCreateUser, { params: {}, query: {}, body });
    expect(reply.status).toBe(201);
    return reply.body as AdminUser;
  };
  const find = async (email: string) => {
    const reply = await h.call(accountsAdminFindUsers, { params: {}, query: { email }, body: undefined });
    expect(reply.status).toBe(200);
    return (reply.body as { data: AdminUser[] }).data;
  };

  describe("creating", () => {
    it("when a user is created, then 201 with the user, the e-mail lower-cased and the zone UTC", async () => {
      const email = uniqueEmail("Ann");
      const user = await create({ email: `  ${email.toUpperCase()} `, name: "  Ann Smith " });
      expect(Object.keys(user).sort()).toEqual(["createdAt", "email", "id", "name", "timezone"]);
      expect(user.id).toMatch(/^usr_[0-9A-Za-z]{24}$/);
      expect(user).toMatchObject({ email, name: "Ann Smith", timezone: "UTC" });
      expect(user.createdAt).toMatch(TIMESTAMP);
      expect(Math.abs(Date.parse(user.createdAt) - Date.now())).toBeLessThan(60_000);
      const row = await h.db("users").where({ id: user.id }).first();
      expect(row).toMatchObject({ email, name: "Ann Smith", timezone: "UTC", working_hours: DEFAULT_HOURS });
    });

    it("when a time zone is given, then it is kept, spelled canonically", async () => {
      expect((await create({ email: uniqueEmail(), name: "Bea", timezone: "Europe/Berlin" })).timezone).toBe("Europe/Berlin");
      expect((await create({ email: uniqueEmail(), name: "Bea", timezone: "america/new_york" })).timezone).toBe("America/New_York");
    });

    it.each(["UTC+2", "+02:00", "Mars/Olympus", "Berlin"])("when the time zone is %s, then 400 naming timezone and nothing is stored", async (timezone) => {
      const email = uniqueEmail();
      const err = await h.failure(accountsAdminCreateUser, { params: {}, query: {}, body: { email, name: "Cy", timezone } });
      expect(err).toMatchObject({ code: "invalid_request", status: 400 });
      expect(err.details.param).toBe("timezone");
      expect(await h.db("users").where({ email })).toEqual([]);
    });

    it("when the e-mail is already used, in any case, then 409 user_exists", async () => {
      const email = uniqueEmail();
      await create({ email, name: "First" });
      const err = await h.failure(accountsAdminCreateUser, { params: {}, query: {}, body: { email: email.toUpperCase(), name: "Second" } });
      expect(err).toMatchObject({ code: "user_exists", status: 409 });
      expect(await find(email)).toHaveLength(1);
    });

    it("when the same e-mail is created several times at once, then one is created and the others get 409", async () => {
      const email = uniqueEmail("race");
      const results = await Promise.allSettled(
        Array.from({ length: 5 }, () => h.call(accountsAdminCreateUser, { params: {}, query: {}, body: { email, name: "Racer" } })),
      );
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      const refused = results.flatMap((r) => (r.status === "rejected" ? [r.reason] : []));
      expect(refused).toHaveLength(4);
      for (const err of refused) expect(err).toMatchObject({ code: "user_exists", status: 409 });
      expect(await h.db("users").where({ email }).count({ n: "*" })).toEqual([{ n: 1 }]);
    });

    it("when the body is invalid, then 400 naming the field", async () => {
      const cases: [unknown, string][] = [
        [{ email: "not-an-email", name: "X" }, "email"],
        [{ email: uniqueEmail() }, "name"],
        [{ email: uniqueEmail(), name: "   " }, "name"],
        [{ email: uniqueEmail(), name: "X", admin: true }, "admin"],
      ];
      for (const [body, param] of cases) {
        const err = await h.failure(accountsAdminCreateUser, { params: {}, query: {}, body } as never);
        expect(err).toMatchObject({ code: "invalid_request", status: 400 });
        expect(err.details.param).toBe(param);
      }
    });
  });

  describe("finding by e-mail", () => {
    it("when the e-mail matches in any case, then the user is listed", async () => {
      const email = uniqueEmail();
      const user = await create({ email, name: "Dee" });
      expect(await find(email.toUpperCase())).toEqual([user]);
      expect(await find(` ${email} `)).toEqual([user]);
    });

    it("when no user has the e-mail exactly, then the list is empty", async () => {
      const email = uniqueEmail();
      await create({ email, name: "Eve" });
      expect(await find(email.slice(0, -1))).toEqual([]);
      expect(await find(`x${email}`)).toEqual([]);
      expect(await find("%@example.com")).toEqual([]);
    });

    it("when the query has no e-mail or an unknown parameter, then 400", async () => {
      const missing = await h.failure(accountsAdminFindUsers, { params: {}, query: {}, body: undefined } as never);
      expect(missing.details.param).toBe("email");
      const unknown = await h.failure(accountsAdminFindUsers, { params: {}, query: { email: "a@b.c", limit: "1" }, body: undefined } as never);
      expect(unknown.details.param).toBe("limit");
    });
  });

  describe("lookup by other services", () => {
    it("when asked by ids and e-mails, then the known users come back with zones and hours, in one query", async () => {
      const ann = await create({ email: uniqueEmail(), name: "Ann", timezone: "Asia/Tokyo" });
      const bob = await create({ email: uniqueEmail(), name: "Bob" });
      const cid = await create({ email: uniqueEmail(), name: "Cid" });
      let queries = 0;
      // The outbox relay polls on the same pool; only queries of the users count here.
      const count = (q: { sql: string }) => void (q.sql.includes("users") && (queries += 1));
      h.db.on("query", count);
      try {
        const { users } = await h.call(accountsLookupUsers, { ids: [ann.id, newId("usr"), "nonsense", bob.id], emails: [cid.email.toUpperCase(), "nobody@example.com", bob.email] });
        expect(queries).toBe(1);
        expect(users.map((u) => u.id).sort()).toEqual([ann.id, bob.id, cid.id].sort());
        expect(users.find((u) => u.id === ann.id)).toEqual({ id: ann.id, email: ann.email, name: "Ann", timezone: "Asia/Tokyo", workingHours: DEFAULT_HOURS, preferences: NO_PREFERENCES });
      } finally {
        h.db.off("query", count);
      }
    });

    it("when asked for nothing, then nothing comes back", async () => {
      expect(await h.call(accountsLookupUsers, {})).toEqual({ users: [] });
      expect(await h.call(accountsLookupUsers, { ids: [], emails: [] })).toEqual({ users: [] });
    });
  });
});
