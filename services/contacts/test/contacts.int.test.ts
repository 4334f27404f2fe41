import { newId } from "@sched/ids";
import { contactsCreate, contactsDelete, contactsGet, contactsList, contactsUpdate, type Contact, type ContactList, type Mode } from "@sched/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callerFor, makeUser, startContacts, type ContactsHarness, type TestUser } from "./harness.js";

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

describe("contacts routes against Postgres", () => {
  let h: ContactsHarness;
  beforeAll(async () => {
    h = await startContacts();
  });
  afterAll(async () => h?.stop());

  const add = async (owner: TestUser, body: { email: string; relationship?: "colleague" | "client" | "friend" | "other" }, mode: Mode = "test") => {
    const reply = await h.call(contactsCreate, { params: {}, query: {}, body }, callerFor(owner, mode));
    expect(reply.status).toBe(201);
    return reply.body as Contact;
  };
  const list = async (owner: TestUser, query: { includeBlocked?: "true" | "false" } = {}, mode: Mode = "test") => {
    const reply = await h.call(contactsList, { params: {}, query, body: undefined }, callerFor(owner, mode));
    expect(reply.status).toBe(200);
    return reply.body as ContactList;
  };
  const block = async (owner: TestUser, id: string) =>
    h.call(contactsUpdate, { params: { id }, query: {}, body: { blocked: true } }, callerFor(owner));

  describe("adding", () => {
    it("when a contact is added, then 201 with the contact, its e-mail trimmed and lower-cased", async () => {
      const ann = makeUser("Ann");
      const reply = await h.call(contactsCreate, { params: {}, query: {}, body: { email: "  Carl.Known@Example.COM ", relationship: "colleague" } }, callerFor(ann));
      expect(reply.status).toBe(201);
      const contact = reply.body as Contact;
      expect(contact.id).toMatch(/^ctc_[0-9A-Za-z]{24}$/);
      expect(contact).toMatchObject({ email: "carl.known@example.com", name: null, relationship: "colleague", blocked: false });
      expect(contact.addedAt).toMatch(TIMESTAMP);
      expect(Math.abs(Date.parse(contact.addedAt) - Date.now())).toBeLessThan(60_000);
      const stored = await h.db("contacts").where({ id: contact.id }).first();
      expect(stored).toMatchObject({ owner_user_id: ann.userId, mode: "test", email: "carl.known@example.com", blocked: false });
    });

    it("when no relationship is given, then it is other", async () => {
      expect((await add(makeUser(), { email: "plain@example.com" })).relationship).toBe("other");
    });

    it("when the e-mail is the caller's own, then 400 invalid_request naming email", async () => {
      const ann = makeUser();
      const err = await h.failure(contactsCreate, { params: {}, query: {}, body: { email: ann.email.toUpperCase() } }, callerFor(ann));
      expect(err).toMatchObject({ code: "invalid_request", status: 400 });
      expect(err.details.param).toBe("email");
      expect((await list(ann)).data).toEqual([]);
    });

    it("when the e-mail is already listed, in any case, then 409 contact_exists", async () => {
      const ann = makeUser();
      await add(ann, { email: "dup@example.com" });
      const err = await h.failure(contactsCreate, { params: {}, query: {}, body: { email: "DUP@example.com", relationship: "friend" } }, callerFor(ann));
      expect(err).toMatchObject({ code: "contact_exists", status: 409 });
      expect((await list(ann)).data).toHaveLength(1);
    });

    it("when two requests add the same e-mail at once, then one is created and the other gets 409", async () => {
      const ann = makeUser();
      const body = { email: "race@example.com" };
      const results = await Promise.allSettled(Array.from({ length: 4 }, () => h.call(contactsCreate, { params: {}, query: {}, body }, callerFor(ann))));
      const created = results.filter((r) => r.status === "fulfilled");
      const refused = results.flatMap((r) => (r.status === "rejected" ? [r.reason] : []));
      expect(created).toHaveLength(1);
      expect(refused).toHaveLength(3);
      for (const err of refused) expect(err).toMatchObject({ code: "contact_exists", status: 409 });
      expect(await h.db("contacts").where({ owner_user_id: ann.userId }).count({ n: "*" })).toEqual([{ n: 1 }]);
    });

    it("when the list holds 1,000 contacts in a mode, then the next is 400, and the other mode still has room", async () => {
      const ann = makeUser();
      const rows = Array.from({ length: 999 }, (_, i) => ({ id: newId("ctc"), owner_user_id: ann.userId, mode: "test", email: `bulk${i}@example.com`, relationship: "other" }));
      await h.db.batchInsert("contacts", rows, 500);
      await add(ann, { email: "thousandth@example.com" });
      const err = await h.failure(contactsCreate, { params: {}, query: {}, body: { email: "one-too-many@example.com" } }, callerFor(ann));
      expect(err).toMatchObject({ code: "invalid_request", status: 400 });
      expect((await list(ann)).data).toHaveLength(1_000);
      await add(ann, { email: "one-too-many@example.com" }, "live");
    });

    it("when fields are invalid or unknown, then 400 invalid_request naming the field", async () => {
      const ann = makeUser();
      const cases: Array<[unknown, string]> = [
        [{ email: "not-an-email" }, "email"],
        [{ email: 42 }, "email"],
        [{}, "email"],
        [{ email: "x@example.com", relationship: "boss" }, "relationship"],
        [{ email: "x@example.com", nickname: "X" }, "nickname"],
      ];
      for (const [body, param] of cases) {
        const err = await h.failure(contactsCreate, { params: {}, query: {}, body } as never, callerFor(ann));
        expect(err, JSON.stringify(body)).toMatchObject({ code: "invalid_request" });
        expect(err.details.param).toBe(param);
      }
      expect((await list(ann)).data).toEqual([]);
    });

    it("when no caller comes with the request, then 401", async () => {
      const err = await h.failure(contactsCreate, { params: {}, query: {}, body: { email: "x@example.com" } });
      expect(err).toMatchObject({ code: "unauthorized", status: 401 });
    });
  });

  describe("listing", () => {
    it("lists the most recently added first, ties broken by id in the same direction, with data only", async () => {
      const ann = makeUser();
      const first = await add(ann, { email: "first@example.com" });
      const second = await add(ann, { email: "second@example.com" });
      const sameInstant = new Date("2026-01-01T10:00:00.000Z");
      const ids = [newId("ctc"), newId("ctc"), newId("ctc")];
      await h.db("contacts").insert(ids.map((id, i) => ({ id, owner_user_id: ann.userId, mode: "test", email: `tie${i}@example.com`, relationship: "other", added_at: sameInstant })));
      const tiedDescending = [...ids].sort().reverse();

      const reply = await h.call(contactsList, { params: {}, query: {}, body: undefined }, callerFor(ann));
      expect(Object.keys(reply.body as object)).toEqual(["data"]);
      expect((reply.body as ContactList).data.map((c) => c.id)).toEqual([second.id, first.id, ...tiedDescending]);
    });

    it("leaves blocked contacts out by default and with includeBlocked=false, and includes them with true", async () => {
      const ann = makeUser();
      const kept = await add(ann, { email: "kept@example.com" });
      const blocked = await add(ann, { email: "blocked@example.com" });
      await block(ann, blocked.id);
      expect((await list(ann)).data.map((c) => c.id)).toEqual([kept.id]);
      expect((await list(ann, { includeBlocked: "false" })).data.map((c) => c.id)).toEqual([kept.id]);
      const all = (await list(ann, { includeBlocked: "true" })).data;
      expect(all.map((c) => [c.id, c.blocked])).toEqual([
        [blocked.id, true],
        [kept.id, false],
      ]);
    });

    it("when includeBlocked is not true or false, or repeated, or another parameter comes, then 400 naming it", async () => {
      const ann = makeUser();
      const cases: Array<[unknown, string]> = [
        [{ includeBlocked: "yes" }, "includeBlocked"],
        [{ includeBlocked: "1" }, "includeBlocked"],
        [{ includeBlocked: ["true", "true"] }, "includeBlocked"],
        [{ limit: "10" }, "limit"],
      ];
      for (const [query, param] of cases) {
        const err = await h.failure(contactsList, { params: {}, query, body: undefined } as never, callerFor(ann));
        expect(err).toMatchObject({ code: "invalid_request", status: 400 });
        expect(err.details.param).toBe(param);
      }
    });

    it("shows only the caller's own contacts", async () => {
      const ann = makeUser();
      const bob = makeUser();
      await add(ann, { email: "anns@example.com" });
      expect((await list(bob)).data).toEqual([]);
    });
  });

  describe("one contact", () => {
    it("when the caller owns it, then GET returns it as created", async () => {
      const ann = makeUser();
      const created = await add(ann, { email: "one@example.com", relationship: "client" });
      const reply = await h.call(contactsGet, { params: { id: created.id }, query: {}, body: undefined }, callerFor(ann));
      expect(reply).toEqual({ status: 200, body: created });
    });

    it("when the contact is another user's, unknown, of the wrong shape or of the other mode, then 404", async () => {
      const ann = makeUser();
      const bob = makeUser();
      const created = await add(ann, { email: "private@example.com" });
      const attempts: Array<[string, TestUser, Mode]> = [
        [created.id, bob, "test"],
        [created.id, ann, "live"],
        [newId("ctc"), ann, "test"],
        ["not-an-id", ann, "test"],
        [created.id.replace("ctc_", "mtg_"), ann, "test"],
      ];
      for (const [id, who, mode] of attempts) {
        for (const ep of [contactsGet, contactsDelete] as const) {
          const err = await h.failure(ep, { params: { id }, query: {}, body: undefined }, callerFor(who, mode));
          expect(err).toMatchObject({ code: "not_found", status: 404 });
        }
        const err = await h.failure(contactsUpdate, { params: { id }, query: {}, body: { blocked: true } }, callerFor(who, mode));
        expect(err).toMatchObject({ code: "not_found", status: 404 });
      }
      expect(await h.db("contacts").where({ id: created.id }).first()).toMatchObject({ blocked: false });
    });
  });

  describe("updating", () => {
    it("changes only the given fields and answers 200 with the whole contact", async () => {
      const ann = makeUser();
      const created = await add(ann, { email: "patch@example.com", relationship: "friend" });
      const blocked = await block(ann, created.id);
      expect(blocked).toEqual({ status: 200, body: { ...created, blocked: true } });
      const moved = await h.call(contactsUpdate, { params: { id: created.id }, query: {}, body: { relationship: "client" } }, callerFor(ann));
      expect(moved.body).toEqual({ ...created, blocked: true, relationship: "client" });
      const both = await h.call(contactsUpdate, { params: { id: created.id }, query: {}, body: { relationship: "other", blocked: false } }, callerFor(ann));
      expect(both.body).toEqual({ ...created, relationship: "other", blocked: false });
    });

    it("when the body is empty, has unknown fields or wrong types, then 400", async () => {
      const ann = makeUser();
      const created = await add(ann, { email: "patch-bad@example.com" });
      for (const body of [{}, { name: "X" }, { blocked: "yes" }, { relationship: "boss" }, { email: "other@example.com" }]) {
        const err = await h.failure(contactsUpdate, { params: { id: created.id }, query: {}, body } as never, callerFor(ann));
        expect(err, JSON.stringify(body)).toMatchObject({ code: "invalid_request", status: 400 });
      }
      const unknown = await h.failure(contactsUpdate, { params: { id: created.id }, query: {}, body: { blocked: true, name: "X" } } as never, callerFor(ann));
      expect(unknown.details.param).toBe("name");
    });
  });

  describe("deleting", () => {
    it("answers 204 without a body, and the contact is gone", async () => {
      const ann = makeUser();
      const created = await add(ann, { email: "gone@example.com" });
      const reply = await h.call(contactsDelete, { params: { id: created.id }, query: {}, body: undefined }, callerFor(ann));
      expect(reply).toEqual({ status: 204 });
      const again = await h.failure(contactsGet, { params: { id: created.id }, query: {}, body: undefined }, callerFor(ann));
      expect(again.code).toBe("not_found");
      const twice = await h.failure(contactsDelete, { params: { id: created.id }, query: {}, body: undefined }, callerFor(ann));
      expect(twice.code).toBe("not_found");
      await add(ann, { email: "gone@example.com" });
    });
  });

  describe("test and live", () => {
    it("keeps the two modes' lists apart", async () => {
      const ann = makeUser();
      const inTest = await add(ann, { email: "mode@example.com" }, "test");
      expect((await list(ann, {}, "live")).data).toEqual([]);
      const inLive = await add(ann, { email: "mode@example.com", relationship: "client" }, "live");
      expect(inLive.id).not.toBe(inTest.id);
      expect((await list(ann, {}, "test")).data.map((c) => c.id)).toEqual([inTest.id]);
      expect((await list(ann, {}, "live")).data.map((c) => c.id)).toEqual([inLive.id]);
      await block(ann, inTest.id);
      expect((await list(ann, {}, "live")).data[0]!.blocked).toBe(false);
    });
  });
});
