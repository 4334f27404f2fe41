import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "@sched/testing";
import { call, createUserWithKey, expectError } from "../harness.js";
import { attachGoogle, startInvitesWorld, type InvitesWorld } from "../invitesSetup.js";

type Invite = { email: string; kind: string; sequence: number; state: string; channel: string; attempts: number };

async function settled(world: InvitesWorld, key: string, meetingId: string, sequence: number): Promise<Invite[]> {
  return eventually(async () => {
    const res = await call(world.url, "GET", `/v1/meetings/${meetingId}/invites`, { key });
    const data = res.body.data as Invite[];
    return data.length > 0 && data.every((i) => i.state !== "pending") && data.some((i) => i.sequence === sequence) ? data : undefined;
  }, 8_000, 50);
}

const eventIdOf = (meetingId: string) => Buffer.from(meetingId).toString("hex");

describe("invites through Google Calendar (standalone)", () => {
  let world: InvitesWorld;

  beforeAll(async () => {
    world = await startInvitesWorld("standalone");
  });
  afterAll(async () => world?.stop());

  it("connects with OAuth 2.0: consent URL, callback bound to the user by state, list and removal", async () => {
    const user = await createUserWithKey(world.url, { mode: "live" });
    const started = await call(world.url, "POST", "/v1/calendar-connections/google", { key: user.key });
    expect(started.status).toBe(201);
    const consent = new URL(started.body.authorizationUrl);
    expect(consent.pathname).toBe("/o/oauth2/v2/auth");
    expect(consent.searchParams.get("access_type")).toBe("offline");
    expect(consent.searchParams.get("scope")).toContain("https://www.googleapis.com/auth/calendar.events");
    const state = consent.searchParams.get("state")!;
    expect(state.length).toBeGreaterThanOrEqual(40);

    const code = world.google.issueCode("ann.g@gmail.com");
    const back = await call(world.url, "GET", `/v1/calendar-connections/google/callback?state=${state}&code=${encodeURIComponent(code)}&scope=email`);
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({ provider: "google", accountEmail: "ann.g@gmail.com", status: "active" });
    expect(world.google.tokenCalls().at(-1)!.body).toMatchObject({ grant_type: "authorization_code", code, client_id: "client-123.apps.googleusercontent.com" });

    // A state works once: a replayed redirect connects nothing.
    expectError(await call(world.url, "GET", `/v1/calendar-connections/google/callback?state=${state}&code=x`), 400, "invalid_request");
    expectError(await call(world.url, "GET", "/v1/calendar-connections/google/callback?state=made-up&code=x"), 400, "invalid_request");
    const refused = await call(world.url, "POST", "/v1/calendar-connections/google", { key: user.key });
    const refusedState = new URL(refused.body.authorizationUrl).searchParams.get("state")!;
    expectError(await call(world.url, "GET", `/v1/calendar-connections/google/callback?state=${refusedState}&error=access_denied`), 400, "invalid_request");

    const list = await call(world.url, "GET", "/v1/calendar-connections", { key: user.key });
    expect(list.body.data).toEqual([back.body]);
    const other = await createUserWithKey(world.url, { mode: "live" });
    expect((await call(world.url, "GET", "/v1/calendar-connections", { key: other.key })).body.data).toEqual([]);
    expectError(await call(world.url, "DELETE", `/v1/calendar-connections/${back.body.id}`, { key: other.key }), 404, "not_found");
    const readOnly = await createUserWithKey(world.url, { mode: "live", scopes: ["account:read"] });
    expectError(await call(world.url, "POST", "/v1/calendar-connections/google", { key: readOnly.key }), 403, "forbidden");
    expect((await call(world.url, "DELETE", `/v1/calendar-connections/${back.body.id}`, { key: user.key })).status).toBe(204);
    expect((await call(world.url, "GET", "/v1/calendar-connections", { key: user.key })).body.data).toEqual([]);
  });

  it("keeps the tokens sealed at rest", async () => {
    const user = await createUserWithKey(world.url, { mode: "live" });
    const grant = world.google.grant();
    await attachGoogle(world, user.userId, grant);
    const rows = (await world.sys.system.database("invites")("calendar_connections").where({ user_id: user.userId })) as Array<{ sealed_tokens: string }>;
    expect(rows).toHaveLength(1);
    expect(rows[0]!.sealed_tokens).not.toContain(grant.accessToken);
    expect(rows[0]!.sealed_tokens).not.toContain(grant.refreshToken);
  });

  it("creates an event with the participants as attendees, patches it on update, and deletes it on cancel", async () => {
    const org = await createUserWithKey(world.url, { mode: "live" });
    await attachGoogle(world, org.userId, world.google.grant());
    const created = await call(world.url, "POST", "/v1/meetings", { key: org.key, body: { title: "Roadmap", duration: "1 hour", startTime: "2031-04-01T13:00:00Z", participants: ["p1@example.com", "p2@example.com"] } });
    const id = created.body.id as string;
    const first = await settled(world, org.key, id, 1);
    expect(first.map((i) => [i.email, i.state, i.channel])).toEqual([
      ["p1@example.com", "sent", "google"],
      ["p2@example.com", "sent", "google"],
    ]);
    const insert = world.google.calendarCalls().find((c) => c.method === "POST" && c.body?.id === eventIdOf(id))!;
    expect(insert.query.sendUpdates).toBe("all");
    expect(insert.path).toBe("/calendar/v3/calendars/primary/events");
    expect(insert.body).toMatchObject({ summary: "Roadmap", start: { dateTime: "2031-04-01T13:00:00Z" }, end: { dateTime: "2031-04-01T14:00:00Z" }, attendees: [{ email: "p1@example.com" }, { email: "p2@example.com" }] });
    expect(world.smtp.to("p1@example.com")).toHaveLength(0);

    await call(world.url, "PATCH", `/v1/meetings/${id}`, { key: org.key, body: { participants: ["p1@example.com"], startTime: "2031-04-01T15:00:00Z" } });
    const second = await settled(world, org.key, id, 2);
    expect(second.map((i) => [i.email, i.kind, i.state, i.channel])).toEqual([
      ["p1@example.com", "request", "sent", "google"],
      ["p2@example.com", "cancel", "sent", "google"],
    ]);
    const patch = world.google.calendarCalls().find((c) => c.method === "PATCH" && c.path.endsWith(`/events/${eventIdOf(id)}`))!;
    expect(patch.query.sendUpdates).toBe("all");
    expect(patch.body).toMatchObject({ attendees: [{ email: "p1@example.com" }], start: { dateTime: "2031-04-01T15:00:00Z" }, sequence: 2 });

    await call(world.url, "PATCH", `/v1/meetings/${id}`, { key: org.key, body: { status: "cancelled" } });
    await settled(world, org.key, id, 3);
    const removal = world.google.calendarCalls().find((c) => c.method === "DELETE" && c.path.endsWith(`/events/${eventIdOf(id)}`))!;
    expect(removal.query.sendUpdates).toBe("all");
    expect(world.google.events.get(eventIdOf(id))!.deleted).toBe(true);
  });

  it("refreshes an expired access token and stores the new one", async () => {
    const org = await createUserWithKey(world.url, { mode: "live" });
    const grant = world.google.grant({ accessExpiresInMs: -1_000 });
    await attachGoogle(world, org.userId, grant);
    const created = await call(world.url, "POST", "/v1/meetings", { key: org.key, body: { title: "Fresh", duration: "15 mins", startTime: "2031-04-02T10:00:00Z", participants: ["r@example.com"] } });
    expect((await settled(world, org.key, created.body.id, 1))[0]).toMatchObject({ state: "sent", channel: "google" });
    expect(world.google.tokenCalls().some((c) => c.body?.grant_type === "refresh_token" && c.body.refresh_token === grant.refreshToken)).toBe(true);
    const insert = world.google.calendarCalls().find((c) => c.body?.id === eventIdOf(created.body.id))!;
    expect(insert.accessToken).not.toBe(grant.accessToken);
  });

  it("marks a revoked grant broken and sends the invites by e-mail instead", async () => {
    const org = await createUserWithKey(world.url, { mode: "live" });
    const grant = world.google.grant();
    const connectionId = await attachGoogle(world, org.userId, grant);
    world.google.revoke(grant.refreshToken);
    const created = await call(world.url, "POST", "/v1/meetings", { key: org.key, body: { title: "Fallback", duration: "15 mins", startTime: "2031-04-03T10:00:00Z", participants: ["fb@example.com"] } });
    expect((await settled(world, org.key, created.body.id, 1))[0]).toMatchObject({ state: "sent", channel: "email" });
    expect(world.smtp.to("fb@example.com")).toHaveLength(1);
    const list = await call(world.url, "GET", "/v1/calendar-connections", { key: org.key });
    expect(list.body.data).toEqual([expect.objectContaining({ id: connectionId, status: "broken" })]);
  });

  it("retries a provider answering 503 and 429 for a while, then delivers once", async () => {
    const org = await createUserWithKey(world.url, { mode: "live" });
    await attachGoogle(world, org.userId, world.google.grant());
    world.google.failNext(503, 429, 500);
    const created = await call(world.url, "POST", "/v1/meetings", { key: org.key, body: { title: "Bumpy", duration: "15 mins", startTime: "2031-04-04T10:00:00Z", participants: ["b1@example.com", "b2@example.com"] } });
    const invites = await settled(world, org.key, created.body.id, 1);
    expect(invites.map((i) => [i.state, i.channel, i.attempts])).toEqual([
      ["sent", "google", 4],
      ["sent", "google", 4],
    ]);
    const inserts = world.google.calendarCalls().filter((c) => c.method === "POST" && c.body?.id === eventIdOf(created.body.id));
    expect(inserts).toHaveLength(4);
    expect(world.google.events.has(eventIdOf(created.body.id))).toBe(true);
    expect(world.smtp.to("b1@example.com")).toHaveLength(0);
  });

  it("keeps a change failed and visible after the last try", async () => {
    const org = await createUserWithKey(world.url, { mode: "live" });
    await attachGoogle(world, org.userId, world.google.grant());
    world.google.failNext(503, 503, 503, 503);
    const created = await call(world.url, "POST", "/v1/meetings", { key: org.key, body: { title: "Doomed", duration: "15 mins", startTime: "2031-04-05T10:00:00Z", participants: ["d@example.com"] } });
    const [invite] = await settled(world, org.key, created.body.id, 1);
    expect(invite).toMatchObject({ state: "failed", channel: "google", attempts: 4 });
    expect((invite as unknown as { lastError: string }).lastError).toMatch(/Google: 503/);
  });

  it("adds busy time from the connected calendar to the day view, and leaves it out when Google is slow", async () => {
    const user = await createUserWithKey(world.url, { mode: "live", timezone: "UTC" });
    await attachGoogle(world, user.userId, world.google.grant());
    world.google.busy = [{ start: "2031-04-07T10:00:00Z", end: "2031-04-07T11:30:00Z" }];
    const day = await call(world.url, "GET", "/v1/availability?date=2031-04-07", { key: user.key });
    expect(day.status).toBe(200);
    expect(day.body.slots).toEqual([
      { start: "09:00", end: "10:00", status: "free" },
      { start: "10:00", end: "11:30", status: "busy" },
      { start: "11:30", end: "17:00", status: "free" },
    ]);
    const freeBusy = world.google.calendarCalls().find((c) => c.path === "/calendar/v3/freeBusy")!;
    expect(freeBusy.body).toMatchObject({ timeMin: "2031-04-07T09:00:00Z", timeMax: "2031-04-07T17:00:00Z", items: [{ id: "primary" }] });
    // A second look within the cache's lifetime does not ask Google again.
    const asked = world.google.calendarCalls().length;
    expect((await call(world.url, "GET", "/v1/availability?date=2031-04-07", { key: user.key })).body.slots).toHaveLength(3);
    expect(world.google.calendarCalls().length).toBe(asked);
    world.google.delayMs = 3_000;
    try {
      const startedAt = Date.now();
      const slow = await call(world.url, "GET", "/v1/availability?date=2031-04-08", { key: user.key });
      expect(slow.status).toBe(200);
      expect(Date.now() - startedAt).toBeLessThan(2_000);
      expect(slow.body.slots).toEqual([{ start: "09:00", end: "17:00", status: "free" }]);
    } finally {
      world.google.delayMs = 0;
    }
  });
});
