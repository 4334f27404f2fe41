import { contactsCreate, contactsGet, type Contact } from "@sched/proto";
import { eventually } from "@sched/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_LOOKUP_TIMEOUT_MS } from "../src/consumers/accountNames.js";
import { callerFor, makeUser, startContacts, type ContactsHarness, type TestUser } from "./harness.js";

describe("contact names from accounts", () => {
  let h: ContactsHarness;
  beforeAll(async () => {
    h = await startContacts();
  });
  afterAll(async () => h?.stop());
  afterEach(async () => h.accounts.answer());

  const add = async (owner: TestUser, email: string, mode: "test" | "live" = "test") => {
    const reply = await h.call(contactsCreate, { params: {}, query: {}, body: { email } }, callerFor(owner, mode));
    expect(reply.status).toBe(201);
    return reply.body as Contact;
  };
  const nameOf = async (id: string) => ((await h.db("contacts").where({ id }).first()) as { name: string | null }).name;

  it("when the contact has an account, then the name is there at creation", async () => {
    const carl = makeUser("Carl Known");
    h.accounts.know(carl);
    const contact = await add(makeUser(), carl.email.toUpperCase());
    expect(contact.name).toBe("Carl Known");
    expect(await nameOf(contact.id)).toBe("Carl Known");
  });

  it("when the contact has no account, then the name is null", async () => {
    expect((await add(makeUser(), "nobody-here@example.com")).name).toBeNull();
  });

  it("when accounts is not running, then the contact is still added, without a name", async () => {
    const carl = makeUser("Carl Offline");
    h.accounts.know(carl);
    await h.accounts.silence();
    const contact = await add(makeUser(), carl.email);
    expect(contact.name).toBeNull();
  });

  it("when accounts does not answer in time, then the contact is added without a name after the lookup deadline", async () => {
    const carl = makeUser("Carl Slow");
    h.accounts.know(carl);
    await h.accounts.hang();
    const started = Date.now();
    const contact = await add(makeUser(), carl.email);
    const took = Date.now() - started;
    expect(contact.name).toBeNull();
    expect(took).toBeGreaterThanOrEqual(ACCOUNT_LOOKUP_TIMEOUT_MS - 50);
    expect(took).toBeLessThan(ACCOUNT_LOOKUP_TIMEOUT_MS + 2_000);
  });

  it("when the account is created later, then user.created names every row with that e-mail, for every owner and mode", async () => {
    const late = makeUser("Late Joiner");
    const ann = makeUser();
    const bob = makeUser();
    const fromAnn = await add(ann, late.email);
    const fromAnnLive = await add(ann, late.email, "live");
    const fromBob = await add(bob, late.email.toUpperCase());
    const unrelated = await add(bob, "someone-else@example.com");
    expect([fromAnn.name, fromAnnLive.name, fromBob.name]).toEqual([null, null, null]);

    await h.accounts.publishCreated(late);
    await eventually(async () => (await nameOf(fromAnn.id)) === "Late Joiner" && (await nameOf(fromAnnLive.id)) === "Late Joiner" && (await nameOf(fromBob.id)) === "Late Joiner");
    const seen = await h.call(contactsGet, { params: { id: fromBob.id }, query: {}, body: undefined }, callerFor(bob));
    expect((seen.body as Contact).name).toBe("Late Joiner");
    expect(await nameOf(unrelated.id)).toBeNull();
  });

  it("when the account is renamed, then user.updated renames the contact rows", async () => {
    const dora = makeUser("Dora");
    h.accounts.know(dora);
    const contact = await add(makeUser(), dora.email);
    expect(contact.name).toBe("Dora");
    await h.accounts.publishUpdated({ ...dora, name: "Dora Renamed" });
    await eventually(async () => (await nameOf(contact.id)) === "Dora Renamed");
  });

  it("when accounts was silent at creation, then the later user.created still names the contact", async () => {
    const eve = makeUser("Eve");
    await h.accounts.silence();
    const contact = await add(makeUser(), eve.email);
    expect(contact.name).toBeNull();
    await h.accounts.answer();
    await h.accounts.publishCreated(eve);
    await eventually(async () => (await nameOf(contact.id)) === "Eve");
  });
});
