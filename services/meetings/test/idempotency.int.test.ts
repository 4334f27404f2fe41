import { requestFingerprint } from "@sched/ids";
import { MeetingCreateBody, type Caller } from "@sched/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deleteExpiredIdempotencyKeys } from "../src/db/queries.js";

import { client, hoursFromNow, newCaller, startMeetings, type TestMeetings } from "./harness.js";

let h: TestMeetings;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  h = await startMeetings();
  api = client(h.bus);
});
afterAll(async () => h?.close());

const body = () => ({ title: "Kick-off", duration: "45 mins", startTime: hoursFromNow(24), participants: ["x@example.com"] });
const key = (value: string) => ({ "Idempotency-Key": value });
const meetingsOf = async (caller: Caller) => Number((await h.db("meetings").where({ organizer_id: caller.userId }).count({ c: "*" }))[0]!.c);
const eventsOf = async (meetingId: string) => Number((await h.db("outbox").whereRaw("payload->>'meetingId' = ?", [meetingId]).count({ c: "*" }))[0]!.c);

describe("Idempotency-Key on POST /v1/meetings", () => {
  it("the same key and body replays the first response with Idempotent-Replayed and creates nothing more", async () => {
    const alice = newCaller();
    const b = body();
    const first = await api.create(alice, b, key("order-1"));
    expect(first.status).toBe(201);
    expect(first.headers["Idempotent-Replayed"]).toBeUndefined();
    const again = await api.create(alice, { ...b }, key("order-1"));
    expect(again).toEqual({ status: 201, body: first.body, headers: { "Idempotent-Replayed": "true" } });
    expect(await meetingsOf(alice)).toBe(1);
    expect(await eventsOf(first.body.id)).toBe(1);
  });

  it("the replay is the first response even after the meeting changed", async () => {
    const alice = newCaller();
    const b = body();
    const first = await api.create(alice, b, key("k"));
    await api.update(alice, first.body.id, { title: "Changed" });
    expect((await api.create(alice, b, key("k"))).body).toEqual(first.body);
  });

  it("the same key with a different body is 422 idempotency_key_reused", async () => {
    const alice = newCaller();
    await api.create(alice, body(), key("k"));
    const other = await api.create(alice, { ...body(), title: "Other" }, key("k"));
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe("idempotency_key_reused");
    expect(await meetingsOf(alice)).toBe(1);
  });

  it("bodies that differ only in key order or e-mail case are the same request", async () => {
    const alice = newCaller();
    const b = body();
    const first = await api.create(alice, b, key("k"));
    const reordered = { participants: ["X@Example.com"], startTime: b.startTime, duration: b.duration, title: b.title };
    expect((await api.create(alice, reordered, key("k"))).headers["Idempotent-Replayed"]).toBe("true");
    expect(first.status).toBe(201);
  });

  it("keys are per API key: another key of the same user with the same value creates its own meeting", async () => {
    const alice = newCaller();
    const otherKey = { ...alice, apiKeyId: "key_000000000000000000000001" };
    const a = await api.create(alice, body(), key("shared"));
    const b = await api.create(otherKey, body(), key("shared"));
    expect(b.status).toBe(201);
    expect(b.body.id).not.toBe(a.body.id);
    expect(b.headers["Idempotent-Replayed"]).toBeUndefined();
  });

  it("two concurrent requests with one key create one meeting; the others replay it or are told it is in progress", async () => {
    const alice = newCaller();
    const b = body();
    const answers = await Promise.all(Array.from({ length: 8 }, () => api.create(alice, b, key("race"))));
    expect(await meetingsOf(alice)).toBe(1);
    const created = answers.filter((a) => a.status === 201 && a.headers["Idempotent-Replayed"] === undefined);
    expect(created).toHaveLength(1);
    for (const a of answers) {
      if (a.status === 201) expect(a.body).toEqual(created[0]!.body);
      else expect(a.body.error.code).toBe("idempotency_request_in_progress");
    }
    expect(answers.every((a) => a.status === 201 || a.status === 409)).toBe(true);
  });

  it("while the first request is still running, the same key is 409 idempotency_request_in_progress", async () => {
    const alice = newCaller();
    const b = body();
    const fingerprint = requestFingerprint("POST", "/v1/meetings", MeetingCreateBody.parse(b));
    await h.db("idempotency_keys").insert({
      api_key_id: alice.apiKeyId,
      idem_key: "running",
      fingerprint,
      claim_token: "someone-else",
      state: "in_progress",
      claimed_at: h.db.fn.now(),
      // As a request with four seconds left claims it: its deadline and a second.
      expires_at: h.db.raw("now() + interval '5 seconds'"),
    });
    const answer = await api.create(alice, b, key("running"));
    expect(answer.status).toBe(409);
    expect(answer.body.error.code).toBe("idempotency_request_in_progress");
    // Retry-After: when the claim has expired at the latest.
    expect(answer.body.error.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(answer.body.error.retryAfterSeconds).toBeLessThanOrEqual(5);
    expect(await meetingsOf(alice)).toBe(0);
    // A different body with that key is still a reuse.
    expect((await api.create(alice, { ...b, title: "Else" }, key("running"))).status).toBe(422);
  });

  it("a claim whose request's deadline has passed (the request died holding it) is free again, for any request", async () => {
    const alice = newCaller();
    const b = body();
    await h.db("idempotency_keys").insert({
      api_key_id: alice.apiKeyId,
      idem_key: "orphan",
      fingerprint: requestFingerprint("POST", "/v1/meetings", MeetingCreateBody.parse(b)),
      claim_token: "dead",
      state: "in_progress",
      claimed_at: h.db.raw("now() - interval '3 seconds'"),
      expires_at: h.db.raw("now() - interval '1 second'"),
    });
    const answer = await api.create(alice, { ...b, title: "Another" }, key("orphan"));
    expect(answer.status).toBe(201);
    expect(await meetingsOf(alice)).toBe(1);
    // Its record is now kept for the key's 24 hours.
    const record = await h.db("idempotency_keys").where({ api_key_id: alice.apiKeyId, idem_key: "orphan" }).first(h.db.raw("expires_at > now() + interval '23 hours' as kept"));
    expect(record.kept).toBe(true);
  });

  it("after 24 hours a key is free again", async () => {
    const alice = newCaller();
    const first = await api.create(alice, body(), key("old"));
    await h.db("idempotency_keys").where({ api_key_id: alice.apiKeyId, idem_key: "old" }).update({ expires_at: h.db.raw("now() - interval '1 second'") });
    const second = await api.create(alice, { ...body(), title: "New day" }, key("old"));
    expect(second.status).toBe(201);
    expect(second.body.id).not.toBe(first.body.id);
    expect(second.headers["Idempotent-Replayed"]).toBeUndefined();
  });

  it("expired keys are swept away and live ones kept", async () => {
    const alice = newCaller();
    await api.create(alice, body(), key("sweep-old"));
    await api.create(alice, body(), key("sweep-new"));
    await h.db("idempotency_keys").where({ api_key_id: alice.apiKeyId, idem_key: "sweep-old" }).update({ expires_at: h.db.raw("now() - interval '1 second'") });
    expect(await deleteExpiredIdempotencyKeys(h.db)).toBeGreaterThanOrEqual(1);
    expect(await h.db("idempotency_keys").where({ api_key_id: alice.apiKeyId }).pluck("idem_key")).toEqual(["sweep-new"]);
  });

  it("a request refused by validation stores nothing under its key", async () => {
    const alice = newCaller();
    expect((await api.create(alice, { ...body(), duration: "3 hours" }, key("fixed"))).status).toBe(400);
    expect((await api.create(alice, { ...body(), startTime: "2031-02-30T10:00:00Z" }, key("fixed"))).status).toBe(400);
    expect((await api.create(alice, body(), key("fixed"))).status).toBe(201);
  });

  it.each([
    ["empty", ""],
    ["longer than 255 characters", "k".repeat(256)],
    ["with a control character", "a\u0001b"],
    ["not ASCII", "clé"],
  ])("a key that is %s is 400 invalid_request naming Idempotency-Key", async (_what, value) => {
    const alice = newCaller();
    const answer = await api.create(alice, body(), key(value));
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ code: "invalid_request", param: "Idempotency-Key" });
    expect(answer.body.error.message).toContain("Idempotency-Key");
    expect(await meetingsOf(alice)).toBe(0);
  });

  it("without a key every POST creates a meeting", async () => {
    const alice = newCaller();
    const b = body();
    await api.create(alice, b);
    await api.create(alice, b);
    expect(await meetingsOf(alice)).toBe(2);
  });
});
