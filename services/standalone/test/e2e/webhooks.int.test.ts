import { eventually } from "@sched/testing";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebhookReceiver, type Received } from "../fakes/webhookReceiver.js";
import { call, createUserWithKey, expectError, startTestSystem, systemPerSuite, WIRINGS } from "../harness.js";

/** Retries within a test's patience: the first after about 200 ms, doubling to a second at most, for 6 s in all. */
const FAST_RETRIES = { WEBHOOKS_RETRY_BASE_MS: "200", WEBHOOKS_RETRY_MAX_DELAY_MS: "1000", WEBHOOKS_RETRY_WINDOW_MS: "6000", WEBHOOKS_POLL_MS: "100" };

// Waits poll every 250 ms: faster polling of the API would spend the key's 100 requests a minute and wait out a 429.
const meetingBody = (title: string) => ({ title, duration: "30 mins", startTime: "2031-05-04T09:30:00Z", participants: ["guest@example.com"], sendInvites: false });

/** The event a delivery carried, after checking its Standard Webhooks signature with the receiver's secret. */
function verified(secret: string, r: Received): { id: string; type: string; data: { object: { id: string; title: string }; previous?: Record<string, unknown> } } {
  const headers = { "webhook-id": String(r.headers["webhook-id"]), "webhook-timestamp": String(r.headers["webhook-timestamp"]), "webhook-signature": String(r.headers["webhook-signature"]) };
  const event = new Webhook(secret).verify(r.body, headers) as ReturnType<typeof verified>;
  expect(headers["webhook-id"]).toBe(event.id);
  return event;
}

describe.each(WIRINGS)("webhooks end to end (%s)", async (wiring) => {
  const suite = await systemPerSuite(wiring, () => startTestSystem(wiring, {}, { webhooks: FAST_RETRIES }));
  const receiver = new WebhookReceiver();
  beforeAll(() => receiver.start());
  afterAll(() => receiver.stop());

  const createEndpoint = async (key: string, url: string, extra: Record<string, unknown> = {}) => {
    const res = await call(suite.url, "POST", "/v1/webhook-endpoints", { key, body: { url, ...extra } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { id: string; secret: string; url: string };
  };

  it.runIf(suite.available)("sends create, update and cancel of a meeting in order, signed, with the earlier values of an update", async () => {
    const user = await createUserWithKey(suite.url);
    const endpoint = await createEndpoint(user.key, receiver.url("/ordered"), { description: "orders" });
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);

    const created = await call(suite.url, "POST", "/v1/meetings", { key: user.key, body: meetingBody("Plan") });
    const updated = await call(suite.url, "PATCH", `/v1/meetings/${created.body.id}`, { key: user.key, body: { title: "Plan B", sendInvites: false } });
    const cancelled = await call(suite.url, "PATCH", `/v1/meetings/${created.body.id}`, { key: user.key, body: { status: "cancelled", sendInvites: false } });
    expect([created.status, updated.status, cancelled.status]).toEqual([201, 200, 200]);

    const received = await eventually(() => receiver.at("/ordered").length >= 3 && receiver.at("/ordered"), 30_000, 250);
    const events = received.map((r) => verified(endpoint.secret, r));
    // Fields in the order GET answers them, the event's own first.
    expect(Object.keys(JSON.parse(received[0]!.body) as object)).toEqual(["id", "type", "createdAt", "mode", "data"]);
    expect(Object.keys(events[0]!.data.object)).toEqual(Object.keys(created.body as object));
    expect(events.map((e) => e.type)).toEqual(["meeting.created", "meeting.updated", "meeting.cancelled"]);
    expect(events.map((e) => e.data.object)).toEqual([created.body, updated.body, cancelled.body]);
    expect(events[1]!.data.previous).toEqual({ title: "Plan" });
    expect(events[2]!.data.previous).toEqual({ status: "confirmed" });

    const listed = await call(suite.url, "GET", "/v1/events", { key: user.key });
    expect(listed.body.data.map((e: { id: string }) => e.id)).toEqual(events.map((e) => e.id).reverse());
    expect(listed.body.data[0]).toMatchObject({ mode: "test", type: "meeting.cancelled" });
    const one = await call(suite.url, "GET", `/v1/events/${events[0]!.id}`, { key: user.key });
    expect(one.body).toEqual(JSON.parse(received[0]!.body));
    const onlyUpdates = await call(suite.url, "GET", "/v1/events?type=meeting.updated", { key: user.key });
    expect(onlyUpdates.body.data.map((e: { id: string }) => e.id)).toEqual([events[1]!.id]);

    // The secret is shown once: never by a read.
    const read = await call(suite.url, "GET", `/v1/webhook-endpoints/${endpoint.id}`, { key: user.key });
    expect(read.body).toEqual({ id: endpoint.id, url: endpoint.url, events: ["*"], description: "orders", enabled: true, mode: "test", createdAt: expect.any(String) });
    const list = await call(suite.url, "GET", "/v1/webhook-endpoints", { key: user.key });
    expect(JSON.stringify(list.body)).not.toContain(endpoint.secret);
    expect(list.body.data.map((e: { id: string }) => e.id)).toEqual([endpoint.id]);
  });

  it.runIf(suite.available)("follows a meeting.created with the invite.sent of each simulated e-mail invite (test mode), the invite as the invites list shows it", async () => {
    const user = await createUserWithKey(suite.url);
    const endpoint = await createEndpoint(user.key, receiver.url("/invited"));
    const onlyInvites = await createEndpoint(user.key, receiver.url("/only-invites"), { events: ["invite.sent", "invite.failed"] });
    const created = await call(suite.url, "POST", "/v1/meetings", { key: user.key, body: { ...meetingBody("Invited"), sendInvites: true } });
    expect(created.status).toBe(201);

    const received = await eventually(() => receiver.at("/invited").length >= 2 && receiver.at("/invited"), 30_000, 250);
    const events = received.map((r) => verified(endpoint.secret, r));
    expect(events.map((e) => e.type)).toEqual(["meeting.created", "invite.sent"]);
    const invites = await call(suite.url, "GET", `/v1/meetings/${created.body.id}/invites`, { key: user.key });
    expect(invites.body.data).toHaveLength(1);
    expect(invites.body.data[0]).toMatchObject({ meetingId: created.body.id, email: "guest@example.com", kind: "request", state: "simulated", channel: "email" });
    expect(events[1]!.data.object).toEqual(invites.body.data[0]);
    expect(JSON.parse(received[1]!.body)).toMatchObject({ mode: "test", createdAt: invites.body.data[0].updatedAt });

    const [only] = await eventually(() => receiver.at("/only-invites").length >= 1 && receiver.at("/only-invites"), 30_000, 250);
    expect(verified(onlyInvites.secret, only!).id).toBe(events[1]!.id);
    const listed = await call(suite.url, "GET", "/v1/events?type=invite.sent", { key: user.key });
    expect(listed.body.data.map((e: { id: string }) => e.id)).toEqual([events[1]!.id]);
    // Once per invite: nothing more comes for it.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(receiver.at("/invited")).toHaveLength(2);
    expect(receiver.at("/only-invites")).toHaveLength(1);
  });

  it.runIf(suite.available)("retries a receiver that answers 500 twice and takes it on the third attempt, listing every attempt; resends with the same webhook-id", async () => {
    const user = await createUserWithKey(suite.url);
    const endpoint = await createEndpoint(user.key, receiver.url("/flaky", [500, 500]));
    await call(suite.url, "POST", "/v1/meetings", { key: user.key, body: meetingBody("Flaky") });
    const delivered = await eventually(async () => {
      const res = await call(suite.url, "GET", `/v1/webhook-endpoints/${endpoint.id}/deliveries`, { key: user.key });
      return res.body.data[0]?.state === "delivered" && res.body.data[0];
    }, 30_000, 250);
    expect(delivered.attempts.map((a: { status: number }) => a.status)).toEqual([500, 500, 200]);
    expect(delivered.nextAttemptAt).toBeNull();
    const got = receiver.at("/flaky");
    expect(got).toHaveLength(3);
    expect(new Set(got.map((r) => r.headers["webhook-id"]))).toEqual(new Set([delivered.eventId]));

    const resent = await call(suite.url, "POST", `/v1/events/${delivered.eventId}/resend`, { key: user.key });
    expect(resent.status).toBe(202);
    expect(resent.body.data).toHaveLength(1);
    const again = await eventually(() => receiver.at("/flaky").length >= 4 && receiver.at("/flaky")[3], 30_000, 250);
    expect(verified(endpoint.secret, again).id).toBe(delivered.eventId);
  });

  it.runIf(suite.available)("keeps delivering to one endpoint while another never answers", async () => {
    const user = await createUserWithKey(suite.url);
    await createEndpoint(user.key, receiver.url("/silent", "hang"));
    const live = await createEndpoint(user.key, receiver.url("/prompt"));
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push((await call(suite.url, "POST", "/v1/meetings", { key: user.key, body: meetingBody(`Busy ${i}`) })).body.id);
    const prompt = await eventually(() => receiver.at("/prompt").length >= ids.length && receiver.at("/prompt"), 30_000, 250);
    // The silent receiver holds each request 10 s: every prompt delivery arrived before the first of them gave up.
    const firstSilent = Math.min(...receiver.at("/silent").map((r) => r.at));
    expect(Math.max(...prompt.map((r) => r.at))).toBeLessThan(firstSilent + 9_000);
    expect(prompt.map((r) => verified(live.secret, r).data.object.id).sort()).toEqual([...ids].sort());
  });

  it.runIf(suite.available)("keeps test and live apart: endpoints, events and deliveries", async () => {
    const tester = await createUserWithKey(suite.url, { mode: "test" });
    const liveKey = await call(suite.url, "POST", `/admin/v1/users/${tester.userId}/api-keys`, { headers: { Authorization: "Bearer adm_test_token_0123456789abcdef" }, body: { mode: "live" } });
    const live = liveKey.body.key as string;

    expectError(await call(suite.url, "POST", "/v1/webhook-endpoints", { key: live, body: { url: receiver.url("/live-plain") } }), 400, "invalid_request");
    const liveEndpoint = await createEndpoint(live, "https://127.0.0.1:9/live");
    const testEndpoint = await createEndpoint(tester.key, receiver.url("/test-world"));
    expect((await call(suite.url, "GET", "/v1/webhook-endpoints", { key: live })).body.data.map((e: { id: string }) => e.id)).toEqual([liveEndpoint.id]);
    expectError(await call(suite.url, "GET", `/v1/webhook-endpoints/${testEndpoint.id}`, { key: live }), 404, "not_found");

    const liveMeeting = await call(suite.url, "POST", "/v1/meetings", { key: live, body: meetingBody("Live") });
    const testMeeting = await call(suite.url, "POST", "/v1/meetings", { key: tester.key, body: meetingBody("Test") });
    const [testDelivery] = await eventually(() => receiver.at("/test-world").length >= 1 && receiver.at("/test-world"), 30_000, 250);
    expect(verified(testEndpoint.secret, testDelivery!).data.object.id).toBe(testMeeting.body.id);

    const liveEvents = await eventually(async () => {
      const res = await call(suite.url, "GET", "/v1/events", { key: live });
      return res.body.data.length > 0 && res.body.data;
    }, 30_000, 250);
    expect(liveEvents.map((e: { data: { object: { id: string } }; mode: string }) => [e.data.object.id, e.mode])).toEqual([[liveMeeting.body.id, "live"]]);
    const testEvents = (await call(suite.url, "GET", "/v1/events", { key: tester.key })).body.data;
    expect(testEvents.map((e: { data: { object: { id: string } } }) => e.data.object.id)).toEqual([testMeeting.body.id]);
    const liveDeliveries = await eventually(async () => {
      const res = await call(suite.url, "GET", `/v1/webhook-endpoints/${liveEndpoint.id}/deliveries`, { key: live });
      return res.body.data[0]?.attempts.length > 0 && res.body.data;
    }, 30_000, 250);
    expect(liveDeliveries.map((d: { eventId: string }) => d.eventId)).toEqual([liveEvents[0].id]);
    // Nothing listens on port 9 with TLS: the attempt failed and is retried.
    expect(liveDeliveries[0].attempts[0]).toMatchObject({ status: null, error: expect.stringContaining("could not reach") });
    expect(receiver.at("/test-world")).toHaveLength(1);
  });

  it.runIf(suite.available)("fails a delivery after the retry window and disables an endpoint that took nothing in it", { timeout: 90_000 }, async () => {
    const user = await createUserWithKey(suite.url);
    const endpoint = await createEndpoint(user.key, receiver.url("/down", Array<number>(200).fill(503)));
    await call(suite.url, "POST", "/v1/meetings", { key: user.key, body: meetingBody("Down") });
    const disabled = await eventually(async () => {
      const res = await call(suite.url, "GET", `/v1/webhook-endpoints/${endpoint.id}`, { key: user.key });
      return res.body.enabled === false && res.body;
    }, 60_000, 250);
    expect(disabled.id).toBe(endpoint.id);
    const [delivery] = (await call(suite.url, "GET", `/v1/webhook-endpoints/${endpoint.id}/deliveries`, { key: user.key })).body.data;
    expect(delivery.state).toBe("failed");
    expect(delivery.attempts.length).toBeGreaterThan(2);
    expect(delivery.attempts.every((a: { status: number }) => a.status === 503)).toBe(true);
  });

  // The stop waits for attempts in flight (up to 10 s each, to the silent receiver of an earlier test), and the wait below is 60 s.
  it.runIf(suite.available && wiring === "cluster")("delivers every event at least once, with the same webhook-id, across a restart of the webhooks service", { timeout: 90_000 }, async () => {
    const user = await createUserWithKey(suite.url);
    await createEndpoint(user.key, receiver.url("/restart"));
    const ids: string[] = [];
    const create = async (i: number) => ids.push((await call(suite.url, "POST", "/v1/meetings", { key: user.key, body: meetingBody(`Restart ${i}`) })).body.id);
    for (let i = 0; i < 3; i++) await create(i);
    await suite.sys.system.stopService("webhooks");
    for (let i = 3; i < 6; i++) await create(i);
    await suite.sys.system.startService("webhooks");
    const got = await eventually(() => {
      const seen = new Set(receiver.at("/restart").map((r) => JSON.parse(r.body).data.object.id));
      return ids.every((id) => seen.has(id)) && receiver.at("/restart");
    }, 60_000, 250);
    const idOfMeeting = new Map<string, string>();
    for (const r of got) {
      const meeting = JSON.parse(r.body).data.object.id as string;
      expect(idOfMeeting.get(meeting) ?? r.headers["webhook-id"]).toBe(r.headers["webhook-id"]);
      idOfMeeting.set(meeting, String(r.headers["webhook-id"]));
    }
    expect(idOfMeeting.size).toBe(6);
  });

  it.runIf(suite.available)("pages through the events newest first without gaps or repeats", async () => {
    const user = await createUserWithKey(suite.url);
    const made: string[] = [];
    for (let i = 0; i < 4; i++) {
      const m = await call(suite.url, "POST", "/v1/meetings", { key: user.key, body: meetingBody(`Page ${i}`) });
      await call(suite.url, "PATCH", `/v1/meetings/${m.body.id}`, { key: user.key, body: { title: `Page ${i}!`, sendInvites: false } });
      made.push(m.body.id);
    }
    const all = await eventually(async () => {
      const res = await call(suite.url, "GET", "/v1/events?limit=100", { key: user.key });
      return res.body.data.length === 8 && (res.body.data as { id: string }[]).map((e) => e.id);
    }, 30_000, 250);
    const walked: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await call(suite.url, "GET", `/v1/events?limit=3${after ? `&startingAfter=${after}` : ""}`, { key: user.key });
      expect(page.status).toBe(200);
      walked.push(...page.body.data.map((e: { id: string }) => e.id));
      if (!page.body.hasMore) break;
      after = walked.at(-1);
    }
    expect(walked).toEqual(all);
    expectError(await call(suite.url, "GET", "/v1/events?limit=0", { key: user.key }), 400, "invalid_request");
    expectError(await call(suite.url, "GET", "/v1/events?startingAfter=evt_000000000000000000000000", { key: user.key }), 400, "invalid_request");
  });

  it.runIf(suite.available)("answers 404 for another user's endpoints and events, and 403 without the scope", async () => {
    const owner = await createUserWithKey(suite.url);
    const other = await createUserWithKey(suite.url);
    const endpoint = await createEndpoint(owner.key, receiver.url("/owned"));
    await call(suite.url, "POST", "/v1/meetings", { key: owner.key, body: meetingBody("Mine") });
    const [event] = await eventually(async () => {
      const res = await call(suite.url, "GET", "/v1/events", { key: owner.key });
      return res.body.data.length > 0 && res.body.data;
    }, 30_000, 250);
    for (const [method, path] of [
      ["GET", `/v1/webhook-endpoints/${endpoint.id}`],
      ["DELETE", `/v1/webhook-endpoints/${endpoint.id}`],
      ["POST", `/v1/webhook-endpoints/${endpoint.id}/roll-secret`],
      ["GET", `/v1/webhook-endpoints/${endpoint.id}/deliveries`],
      ["GET", `/v1/events/${event.id}`],
      ["POST", `/v1/events/${event.id}/resend`],
      ["GET", "/v1/webhook-endpoints/whe_bad"],
    ] as const) {
      expectError(await call(suite.url, method, path, { key: other.key }), 404, "not_found");
    }
    expectError(await call(suite.url, "PATCH", `/v1/webhook-endpoints/${endpoint.id}`, { key: other.key, body: { enabled: false } }), 404, "not_found");
    expect((await call(suite.url, "GET", "/v1/events", { key: other.key })).body.data).toEqual([]);

    const readOnly = await createUserWithKey(suite.url, { scopes: ["meetings:read"] });
    expectError(await call(suite.url, "GET", "/v1/events", { key: readOnly.key }), 403, "forbidden");
    expectError(await call(suite.url, "POST", "/v1/webhook-endpoints", { key: readOnly.key, body: { url: receiver.url("/nope") } }), 403, "forbidden");
  });

  it.runIf(suite.available)("signs with the old and the new secret for a day after a roll", async () => {
    const user = await createUserWithKey(suite.url);
    const endpoint = await createEndpoint(user.key, receiver.url("/rolled"));
    const rolled = await call(suite.url, "POST", `/v1/webhook-endpoints/${endpoint.id}/roll-secret`, { key: user.key });
    expect(rolled.status).toBe(200);
    expect(rolled.body.secret).not.toBe(endpoint.secret);
    expect(Date.parse(rolled.body.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(23 * 3_600_000);
    await call(suite.url, "POST", "/v1/meetings", { key: user.key, body: meetingBody("Rolled") });
    const [got] = await eventually(() => receiver.at("/rolled").length >= 1 && receiver.at("/rolled"), 30_000, 250);
    expect(String(got!.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    expect(verified(rolled.body.secret, got!).id).toBe(verified(endpoint.secret, got!).id);
  });
});

describe("webhooks refuse private addresses unless allowed (standalone)", async () => {
  const suite = await systemPerSuite("standalone", () => startTestSystem("standalone", {}, { webhooks: { WEBHOOKS_ALLOW_PRIVATE: "false" } }));

  it("refuses loopback, private, link-local and metadata addresses, and names resolving to them", async () => {
    const user = await createUserWithKey(suite.url);
    for (const url of [
      "http://127.0.0.1:8150/hook",
      "http://10.1.2.3/hook",
      "http://172.16.0.1/hook",
      "http://192.168.1.20/hook",
      "http://169.254.169.254/latest/meta-data",
      "http://100.100.100.200/",
      "http://[::1]:8150/",
      "http://[fd00:ec2::254]/",
      "http://[::ffff:127.0.0.1]/",
      "http://localhost:8150/hook",
      "http://0.0.0.0/",
    ]) {
      const res = await call(suite.url, "POST", "/v1/webhook-endpoints", { key: user.key, body: { url } });
      expectError(res, 400, "invalid_request");
      expect(res.body.error.param, url).toBe("url");
    }
    expect((await call(suite.url, "GET", "/v1/webhook-endpoints", { key: user.key })).body.data).toEqual([]);
  });

  it("keeps each user to 16 endpoints a mode", async () => {
    const user = await createUserWithKey(suite.url);
    for (let i = 0; i < 16; i++) expect((await call(suite.url, "POST", "/v1/webhook-endpoints", { key: user.key, body: { url: `https://93.184.215.14/hook-${i}` } })).status).toBe(201);
    expectError(await call(suite.url, "POST", "/v1/webhook-endpoints", { key: user.key, body: { url: "https://93.184.215.14/one-more" } }), 400, "invalid_request");
    expect((await call(suite.url, "GET", "/v1/webhook-endpoints", { key: user.key })).body.data).toHaveLength(16);
  });
});
