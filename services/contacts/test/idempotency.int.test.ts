import { requestFingerprint } from "@sched/ids";
import { contactsCreate, IDEMPOTENCY_FINGERPRINT_HEADER, type Caller } from "@sched/proto";
import { rejection } from "@sched/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callerFor, makeUser, startContacts, type ContactsHarness } from "./harness.js";

let h: ContactsHarness;

beforeAll(async () => {
  h = await startContacts();
});
afterAll(async () => h?.stop());

/** POST /v1/contacts as the gateway sends it: the Idempotency-Key and, when given, the gateway's fingerprint. */
const add = (caller: Caller, email: string, key: string, fingerprint?: string) =>
  h.bus.request(
    contactsCreate,
    { params: {}, query: {}, body: { email } },
    { caller, headers: { "Idempotency-Key": key, ...(fingerprint ? { [IDEMPOTENCY_FINGERPRINT_HEADER]: fingerprint } : {}) } },
  );
const contactsOf = async (caller: Caller) => Number((await h.db("contacts").where({ owner_user_id: caller.userId }).count({ c: "*" }))[0]!.c);

describe("Idempotency-Key on POST /v1/contacts, kept by the contacts service", () => {
  it("a repeat replays the first 201 with Idempotent-Replayed, where a plain repeat would be 409 contact_exists", async () => {
    const me = callerFor(makeUser());
    const first = await add(me, "ana@example.com", "k1", "fp-1");
    expect(first.status).toBe(201);
    expect(first.headers?.["Idempotent-Replayed"]).toBeUndefined();
    expect(await add(me, "ana@example.com", "k1", "fp-1")).toEqual({ status: 201, body: first.body, headers: { "Idempotent-Replayed": "true" } });
    expect(await contactsOf(me)).toBe(1);
  });

  it("judges repeats by the gateway's fingerprint when the request carries one", async () => {
    const me = callerFor(makeUser());
    const first = await add(me, "bo@example.com", "k2", "fp-2");
    // The body is not what counts: the gateway already fingerprinted the request as it came (path, query and body).
    const error = await rejection(add(me, "bo@example.com", "k2", "fp-other"));
    expect(error.code).toBe("idempotency_key_reused");
    expect((await add(me, "cy@example.com", "k2", "fp-2")).body).toEqual(first.body);
    expect(await contactsOf(me)).toBe(1);
  });

  it("without the gateway's fingerprint, fingerprints the request itself: method, path and body", async () => {
    const me = callerFor(makeUser());
    const first = await add(me, "di@example.com", "k3");
    expect((await add(me, "di@example.com", "k3")).body).toEqual(first.body);
    const asParsed = contactsCreate.request.parse({ params: {}, query: {}, body: { email: "di@example.com" } }).body;
    expect((await add(me, "di@example.com", "k3", requestFingerprint("POST", "/v1/contacts", asParsed))).body).toEqual(first.body);
    expect((await rejection(add(me, "ed@example.com", "k3"))).code).toBe("idempotency_key_reused");
    expect(await contactsOf(me)).toBe(1);
  });

  it("keeps the answer as finished after the commit, the contact named from accounts", async () => {
    const me = callerFor(makeUser());
    const friend = makeUser("Fay Friend");
    h.accounts.know(friend);
    const first = await add(me, friend.email, "k4", "fp-4");
    expect(first.body).toMatchObject({ email: friend.email, name: "Fay Friend" });
    expect((await add(me, friend.email, "k4", "fp-4")).body).toEqual(first.body);
  });

  it("a refused add keeps nothing under its key: the key then serves another request", async () => {
    const me = callerFor(makeUser());
    await h.bus.request(contactsCreate, { params: {}, query: {}, body: { email: "gus@example.com" } }, { caller: me });
    expect((await rejection(add(me, "gus@example.com", "k5", "fp-5"))).code).toBe("contact_exists");
    const other = await add(me, "hal@example.com", "k5", "fp-6");
    expect(other.status).toBe(201);
    expect(other.headers?.["Idempotent-Replayed"]).toBeUndefined();
    expect(await contactsOf(me)).toBe(2);
  });

  it("concurrent adds with one key make one contact; the others are told it is in progress or get the replay", async () => {
    const me = callerFor(makeUser());
    const answers = await Promise.allSettled(Array.from({ length: 6 }, () => add(me, "ivy@example.com", "k6", "fp-7")));
    expect(await contactsOf(me)).toBe(1);
    const created = answers.flatMap((a) => (a.status === "fulfilled" && a.value.headers?.["Idempotent-Replayed"] === undefined ? [a.value] : []));
    expect(created).toHaveLength(1);
    for (const a of answers) {
      if (a.status === "fulfilled") expect(a.value.body).toEqual(created[0]!.body);
      else expect(a.reason).toMatchObject({ code: "idempotency_request_in_progress" });
    }
  });
});
