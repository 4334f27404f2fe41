import { describe, expect, it } from "vitest";
import { eventually } from "@sched/testing";
import { call, createUserWithKey, WIRINGS } from "../harness.js";
import { attachGoogle, attachMicrosoft, microsoftWorldPerSuite } from "../invitesSetup.js";
import { weekdayIn } from "../days.js";

/** The deployment's public address as the providers know it; the fakes' TLS front sends it to the system on loopback. */
const PUBLIC_BASE = "https://sched.test";
/** Polling so rare that only a push notification explains an answer arriving within the test. */
const POLL_MS = 10 * 60_000;

const startIn = (n: number) => `${weekdayIn(n)}T10:00:00Z`;
const eventIdOf = (meetingId: string) => Buffer.from(meetingId).toString("hex");
type Attendee = { email: string; response: string; respondedAt: string | null };

describe.each(WIRINGS)("answers pushed by Google and Microsoft (%s)", async (wiring) => {
  const suite = await microsoftWorldPerSuite(wiring, {
    PUBLIC_BASE_URL: PUBLIC_BASE,
    GOOGLE_ANSWERS_POLL_MS: String(POLL_MS),
    MICROSOFT_ANSWERS_POLL_MS: String(POLL_MS),
    PROVIDER_ANSWERS_WATCHED_POLL_MS: String(POLL_MS),
    PROVIDER_WATCH_CHECK_MS: "300",
  });
  const { available, microsoft } = suite;

  const responseOf = async (key: string, meetingId: string, email: string) => {
    const res = await call(suite.world.url, "GET", `/v1/meetings/${meetingId}`, { key });
    return (res.body.attendees as Attendee[]).find((a) => a.email === email)?.response;
  };
  const meeting = async (key: string, title: string, participants: string[]) => {
    const res = await call(suite.world.url, "POST", "/v1/meetings", { key, body: { title, duration: "30 mins", startTime: startIn(6), participants } });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };

  it.runIf(available)("a Google watch channel brings an attendee's answer at once; a wrong token changes nothing; removing the connection stops the channel", async () => {
    const { google, url } = suite.world;
    google.fronts.set(PUBLIC_BASE, url);
    const org = await createUserWithKey(url, { mode: "live" });
    const grant = google.grant();
    const connectionId = await attachGoogle(suite.world, org.userId, grant);
    const id = await meeting(org.key, "Pushed G", ["pa@example.com", "pb@example.com"]);
    await eventually(() => google.events.get(eventIdOf(id)), 15_000, 50);
    // The channel is opened on the primary calendar, to the public address, with a token of its own; Google's `sync` is taken.
    const channel = await eventually(() => [...google.channels.values()][0], 15_000, 50);
    expect(channel.address).toBe(`${PUBLIC_BASE}/v1/provider-notifications/google`);
    expect(channel.token!.length).toBeGreaterThanOrEqual(32);
    expect(google.calendarCalls().find((c) => c.path === "/calendar/v3/calendars/primary/events/watch")?.accessToken).toBe(grant.accessToken);
    await eventually(() => google.notifications.some((n) => n.channelId === channel.id && n.state === "sync" && n.status === 202), 10_000, 50);

    google.notifying = false;
    google.respond(eventIdOf(id), "pa@example.com", "accepted");
    const reads = () => google.calendarCalls().filter((c) => c.method === "GET" && c.path === "/calendar/v3/calendars/primary/events").length;
    const readsBefore = reads();
    expect(await google.notifyWithToken(channel.id, "not-the-channel-token")).toBe(202);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(reads()).toBe(readsBefore);
    expect(await responseOf(org.key, id, "pa@example.com")).toBe("needsAction");

    google.notifying = true;
    const since = Date.now();
    google.respond(eventIdOf(id), "pb@example.com", "declined");
    await eventually(async () => (await responseOf(org.key, id, "pb@example.com")) === "declined" && (await responseOf(org.key, id, "pa@example.com")) === "accepted", 10_000, 100);
    expect(Date.now() - since).toBeLessThan(POLL_MS);

    const removed = await call(url, "DELETE", `/v1/calendar-connections/${connectionId}`, { key: org.key });
    expect(removed.status).toBe(204);
    await eventually(() => !google.channels.has(channel.id), 10_000, 50);
  });

  it.runIf(available)("a Graph subscription, opened after the validation handshake, brings an attendee's answer at once; a wrong clientState changes nothing", async () => {
    const { url } = suite.world;
    microsoft.fronts.set(PUBLIC_BASE, url);
    const org = await createUserWithKey(url, { mode: "live" });
    const grant = microsoft.grant("pushorg@contoso.example");
    const connectionId = await attachMicrosoft(suite.world, org.userId, grant);
    const id = await meeting(org.key, "Pushed M", ["ma@example.com", "mb@example.com"]);
    const event = await eventually(() => [...microsoft.events.values()].find((e) => e.subject === "Pushed M" && !e.removed), 15_000, 50);
    const subscription = await eventually(() => [...microsoft.subscriptions.values()].find((s) => s.account === "pushorg@contoso.example"), 15_000, 50);
    expect(subscription.notificationUrl).toBe(`${PUBLIC_BASE}/v1/provider-notifications/microsoft`);
    expect(subscription.clientState!.length).toBeGreaterThanOrEqual(32);
    // Graph's handshake got its token back alone, as plain text.
    const handshake = microsoft.handshakes.at(-1)!;
    expect(handshake).toMatchObject({ status: 200, body: handshake.token });
    expect(handshake.contentType).toMatch(/^text\/plain/);

    microsoft.notifying = false;
    microsoft.respond(event.id, "ma@example.com", "accepted");
    const reads = () => microsoft.graphCalls().filter((c) => c.method === "GET" && c.path === "/v1.0/me/calendarView" && c.accessToken === grant.accessToken).length;
    const readsBefore = reads();
    expect(await microsoft.notifyWithClientState(subscription.id, "not-the-client-state")).toBe(202);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(reads()).toBe(readsBefore);
    expect(await responseOf(org.key, id, "ma@example.com")).toBe("needsAction");

    microsoft.notifying = true;
    microsoft.respond(event.id, "mb@example.com", "tentativelyAccepted");
    await eventually(async () => (await responseOf(org.key, id, "mb@example.com")) === "tentative" && (await responseOf(org.key, id, "ma@example.com")) === "accepted", 10_000, 100);
    expect(microsoft.notifications.filter((n) => n.subscriptionId === subscription.id).every((n) => n.status === 202)).toBe(true);

    const removed = await call(url, "DELETE", `/v1/calendar-connections/${connectionId}`, { key: org.key });
    expect(removed.status).toBe(204);
    await eventually(() => !microsoft.subscriptions.has(subscription.id), 10_000, 50);
  });

  it.runIf(available)("answers Graph's validation handshake with the token as plain text, and takes notifications of unknown subscriptions quietly", async () => {
    const token = "Validation: Testing client application reachability <b>&</b>";
    const res = await fetch(`${suite.world.url}/v1/provider-notifications/microsoft?validationToken=${encodeURIComponent(token)}`, { method: "POST", headers: { "content-type": "text/plain" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(await res.text()).toBe(token);
    // Graph never sends an empty token: an empty one is bad input, not a handshake answered with nothing.
    const empty = await fetch(`${suite.world.url}/v1/provider-notifications/microsoft?validationToken=`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ value: [] }) });
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as { error: { code: string; param?: string } }).error).toMatchObject({ code: "invalid_request", param: "validationToken" });
    const unknown = await fetch(`${suite.world.url}/v1/provider-notifications/microsoft`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ value: [{ subscriptionId: "nope", clientState: "nope" }] }) });
    expect(unknown.status).toBe(202);
    const google = await fetch(`${suite.world.url}/v1/provider-notifications/google`, { method: "POST", headers: { "X-Goog-Channel-ID": "nope", "X-Goog-Channel-Token": "nope", "X-Goog-Resource-State": "exists" } });
    expect(google.status).toBe(202);
  });
});
