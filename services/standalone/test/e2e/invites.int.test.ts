import { describe, expect, it } from "vitest";
import { eventually } from "@sched/testing";
import { call, createUserWithKey, expectError, perSuite, WIRINGS } from "../harness.js";
import { attachGoogle, parseInvite, startInvitesWorld, type InvitesWorld } from "../invitesSetup.js";

type Invite = { email: string; kind: string; sequence: number; state: string; channel: string; attempts: number; lastError: string | null };

async function invitesOf(world: InvitesWorld, key: string, meetingId: string): Promise<Invite[]> {
  const res = await call(world.url, "GET", `/v1/meetings/${meetingId}/invites`, { key });
  expect(res.status).toBe(200);
  return res.body.data as Invite[];
}

/** Waits until every listed invite of the meeting has left `pending` and there are `count` of them. */
async function settledInvites(world: InvitesWorld, key: string, meetingId: string, count: number, sequence?: number): Promise<Invite[]> {
  return eventually(async () => {
    const data = await invitesOf(world, key, meetingId);
    const done = data.length === count && data.every((i) => i.state !== "pending" && (sequence === undefined || i.sequence === sequence));
    return done ? data : undefined;
  }, 8_000, 50);
}

async function settled(world: InvitesWorld, key: string, meetingId: string, sequence: number): Promise<Invite[]> {
  return eventually(async () => {
    const res = await call(world.url, "GET", `/v1/meetings/${meetingId}/invites`, { key });
    const data = res.body.data as Invite[];
    return data.length > 0 && data.every((i) => i.state !== "pending") && data.some((i) => i.sequence === sequence) ? data : undefined;
  }, 8_000, 50);
}

const eventIdOf = (meetingId: string) => Buffer.from(meetingId).toString("hex");

describe.each(WIRINGS)("invites end to end (%s)", async (wiring) => {
  let world: InvitesWorld;
  const { available } = await perSuite(wiring, async () => (world = await startInvitesWorld(wiring)));

  it.runIf(available)("e-mails an iCalendar invite to each participant, updates with a higher SEQUENCE, and cancels removed ones", async () => {
    const org = await createUserWithKey(world.url, { mode: "live" });
    const created = await call(world.url, "POST", "/v1/meetings", {
      key: org.key,
      body: { title: "Design review", description: "Bring sketches", duration: "45 mins", startTime: "2031-05-06T09:15:00+02:00", participants: ["ann@example.com", "bob@example.com"] },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;

    const first = await settledInvites(world, org.key, id, 2);
    expect(first.map((i) => [i.email, i.kind, i.state, i.channel, i.sequence])).toEqual([
      ["ann@example.com", "request", "sent", "email", 1],
      ["bob@example.com", "request", "sent", "email", 1],
    ]);
    for (const who of ["ann@example.com", "bob@example.com"]) {
      const mails = world.smtp.to(who);
      expect(mails).toHaveLength(1);
      const invite = parseInvite(mails[0]!.ics!);
      expect(invite).toMatchObject({ method: "REQUEST", uid: `${id}@sched.invalid`, sequence: 1, summary: "Design review", start: "2031-05-06T07:15:00Z", end: "2031-05-06T08:00:00Z", organizer: org.email });
      expect(invite.attendees.sort()).toEqual(["ann@example.com", "bob@example.com"]);
    }

    const patched = await call(world.url, "PATCH", `/v1/meetings/${id}`, { key: org.key, body: { title: "Design review v2", participants: ["ann@example.com", "cy@example.com"] } });
    expect(patched.status).toBe(200);
    const second = await settledInvites(world, org.key, id, 3, 2);
    expect(second.map((i) => [i.email, i.kind, i.state])).toEqual([
      ["ann@example.com", "request", "sent"],
      ["bob@example.com", "cancel", "sent"],
      ["cy@example.com", "request", "sent"],
    ]);
    const update = parseInvite(world.smtp.to("ann@example.com")[1]!.ics!);
    expect(update).toMatchObject({ method: "REQUEST", uid: `${id}@sched.invalid`, sequence: 2, summary: "Design review v2" });
    expect(update.attendees.sort()).toEqual(["ann@example.com", "cy@example.com"]);
    const removal = parseInvite(world.smtp.to("bob@example.com")[1]!.ics!);
    expect(removal).toMatchObject({ method: "CANCEL", uid: `${id}@sched.invalid`, sequence: 2, attendees: ["bob@example.com"] });

    expect((await call(world.url, "PATCH", `/v1/meetings/${id}`, { key: org.key, body: { status: "cancelled" } })).status).toBe(200);
    // Bob was told at sequence 2; the cancellation goes to the current participants.
    const third = await eventually(async () => {
      const data = await invitesOf(world, org.key, id);
      return data.filter((i) => i.sequence === 3 && i.state === "sent").length === 2 ? data : undefined;
    }, 8_000);
    expect(third.map((i) => [i.email, i.kind, i.sequence])).toEqual([
      ["ann@example.com", "cancel", 3],
      ["bob@example.com", "cancel", 2],
      ["cy@example.com", "cancel", 3],
    ]);
    const cancelled = await eventually(() => {
      const mails = world.smtp.to("cy@example.com");
      return mails.length === 2 ? parseInvite(mails[1]!.ics!) : undefined;
    });
    expect(cancelled).toMatchObject({ method: "CANCEL", status: "CANCELLED", sequence: 3, uid: `${id}@sched.invalid` });
    expect(world.smtp.to("ann@example.com")).toHaveLength(3);
    expect(world.smtp.to("bob@example.com")).toHaveLength(2);
  });

  it.runIf(available)("sends a cancellation to every participant when the organizer removes a meeting that has not ended", async () => {
    const org = await createUserWithKey(world.url, { mode: "live" });
    const created = await call(world.url, "POST", "/v1/meetings", {
      key: org.key,
      body: { title: "Removed by mistake", duration: "30 mins", startTime: "2031-06-03T10:00:00Z", participants: ["dee@example.com", "eve@example.com"] },
    });
    const id = created.body.id as string;
    await settledInvites(world, org.key, id, 2);
    expect((await call(world.url, "DELETE", `/v1/meetings/${id}`, { key: org.key })).status).toBe(204);
    for (const who of ["dee@example.com", "eve@example.com"]) {
      const cancellation = await eventually(() => {
        const mails = world.smtp.to(who);
        return mails.length === 2 ? parseInvite(mails[1]!.ics!) : undefined;
      });
      expect(cancellation).toMatchObject({ method: "CANCEL", status: "CANCELLED", sequence: 2, uid: `${id}@sched.invalid` });
    }
  });

  it.runIf(available)("records test-mode invites as simulated and reaches neither server", async () => {
    const org = await createUserWithKey(world.url, { mode: "test" });
    await attachGoogle(world, org.userId, world.google.grant());
    const mailsBefore = world.smtp.messages.length;
    const googleBefore = world.google.calls.length;
    const created = await call(world.url, "POST", "/v1/meetings", { key: org.key, body: { title: "Dry run", duration: "30 mins", startTime: "2031-01-01T10:00:00Z", participants: ["t1@example.com", "t2@example.com"] } });
    const invites = await settledInvites(world, org.key, created.body.id, 2);
    expect(invites.map((i) => [i.email, i.state, i.channel])).toEqual([
      ["t1@example.com", "simulated", "google"],
      ["t2@example.com", "simulated", "google"],
    ]);
    await call(world.url, "PATCH", `/v1/meetings/${created.body.id}`, { key: org.key, body: { title: "Dry run 2" } });
    await settledInvites(world, org.key, created.body.id, 2, 2);
    const day = await call(world.url, "GET", "/v1/availability?date=2031-01-01", { key: org.key });
    expect(day.status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    expect(world.smtp.messages.length).toBe(mailsBefore);
    expect(world.google.calls.length).toBe(googleBefore);
  });

  it.runIf(available)("shows invites only to those who may see the meeting, and needs meetings:read", async () => {
    const org = await createUserWithKey(world.url, { mode: "live" });
    const guest = await createUserWithKey(world.url, { mode: "live" });
    const outsider = await createUserWithKey(world.url, { mode: "live" });
    const noScope = await createUserWithKey(world.url, { mode: "live", scopes: ["meetings:write"] });
    const created = await call(world.url, "POST", "/v1/meetings", { key: org.key, body: { title: "Private", duration: "15 mins", startTime: "2031-02-01T10:00:00Z", participants: [guest.email] } });
    const id = created.body.id as string;
    expect((await settledInvites(world, guest.key, id, 1))[0]).toMatchObject({ email: guest.email, state: "sent" });
    expectError(await call(world.url, "GET", `/v1/meetings/${id}/invites`, { key: outsider.key }), 404, "not_found");
    expectError(await call(world.url, "GET", "/v1/meetings/mtg_doesnotexist/invites", { key: org.key }), 404, "not_found");
    expectError(await call(world.url, "GET", `/v1/meetings/${id}/invites`, { key: noScope.key }), 403, "forbidden");
    const silent = await call(world.url, "POST", "/v1/meetings", { key: org.key, body: { title: "Quiet", duration: "15 mins", startTime: "2031-02-01T11:00:00Z", participants: [guest.email], sendInvites: false } });
    await new Promise((r) => setTimeout(r, 200));
    expect(await invitesOf(world, org.key, silent.body.id)).toEqual([]);
  });

  it.runIf(available)("keeps a refused address as failed with the reason, and still delivers to the others", async () => {
    const org = await createUserWithKey(world.url, { mode: "live" });
    world.smtp.refuse("nobody@example.com", 550);
    const created = await call(world.url, "POST", "/v1/meetings", { key: org.key, body: { title: "Partly", duration: "15 mins", startTime: "2031-03-01T10:00:00Z", participants: ["nobody@example.com", "somebody@example.com"] } });
    const invites = await settledInvites(world, org.key, created.body.id, 2);
    expect(invites.map((i) => [i.email, i.state])).toEqual([
      ["nobody@example.com", "failed"],
      ["somebody@example.com", "sent"],
    ]);
    expect(invites[0]!.lastError).toMatch(/SMTP/);
    expect(world.smtp.to("somebody@example.com")).toHaveLength(1);
  });

  it.runIf(available)("retries an SMTP server that says try later, then delivers once", async () => {
    const org = await createUserWithKey(world.url, { mode: "live" });
    world.smtp.refuse("later@example.com", 451);
    const created = await call(world.url, "POST", "/v1/meetings", { key: org.key, body: { title: "Later", duration: "15 mins", startTime: "2031-03-02T10:00:00Z", participants: ["later@example.com"] } });
    const retrying = await eventually(async () => {
      const [invite] = await invitesOf(world, org.key, created.body.id);
      return invite && invite.attempts >= 2 ? invite : undefined;
    });
    expect(retrying).toMatchObject({ state: "pending" });
    expect(retrying.lastError).toMatch(/SMTP/);
    world.smtp.refuse("later@example.com", undefined);
    const [sent] = await settledInvites(world, org.key, created.body.id, 1);
    expect(sent).toMatchObject({ state: "sent", lastError: null });
    expect(world.smtp.to("later@example.com")).toHaveLength(1);
  });

  it.runIf(available)("connects with OAuth 2.0: consent URL, callback bound to the user by state, list and removal", async () => {
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

  it.runIf(available)("keeps the tokens sealed at rest", async () => {
    const user = await createUserWithKey(world.url, { mode: "live" });
    const grant = world.google.grant();
    await attachGoogle(world, user.userId, grant);
    const rows = (await world.sys.system.database("invites")("calendar_connections").where({ user_id: user.userId })) as Array<{ sealed_tokens: string }>;
    expect(rows).toHaveLength(1);
    expect(rows[0]!.sealed_tokens).not.toContain(grant.accessToken);
    expect(rows[0]!.sealed_tokens).not.toContain(grant.refreshToken);
  });

  it.runIf(available)("creates an event with the participants as attendees, patches it on update, and deletes it on cancel", async () => {
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

  it.runIf(available)("refreshes an expired access token and stores the new one", async () => {
    const org = await createUserWithKey(world.url, { mode: "live" });
    const grant = world.google.grant({ accessExpiresInMs: -1_000 });
    await attachGoogle(world, org.userId, grant);
    const created = await call(world.url, "POST", "/v1/meetings", { key: org.key, body: { title: "Fresh", duration: "15 mins", startTime: "2031-04-02T10:00:00Z", participants: ["r@example.com"] } });
    expect((await settled(world, org.key, created.body.id, 1))[0]).toMatchObject({ state: "sent", channel: "google" });
    expect(world.google.tokenCalls().some((c) => c.body?.grant_type === "refresh_token" && c.body.refresh_token === grant.refreshToken)).toBe(true);
    const insert = world.google.calendarCalls().find((c) => c.body?.id === eventIdOf(created.body.id))!;
    expect(insert.accessToken).not.toBe(grant.accessToken);
    // The refreshed token was stored: the next meeting uses it without refreshing again.
    const refreshes = world.google.tokenCalls().length;
    const next = await call(world.url, "POST", "/v1/meetings", { key: org.key, body: { title: "Fresh again", duration: "15 mins", startTime: "2031-04-02T11:00:00Z", participants: ["r@example.com"] } });
    expect((await settled(world, org.key, next.body.id, 1))[0]).toMatchObject({ state: "sent", channel: "google" });
    expect(world.google.tokenCalls()).toHaveLength(refreshes);
    expect(world.google.calendarCalls().find((c) => c.body?.id === eventIdOf(next.body.id))!.accessToken).toBe(insert.accessToken);
  });

  it.runIf(available)("marks a revoked grant broken and sends the invites by e-mail instead", async () => {
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

  it.runIf(available)("retries a provider answering 503 and 429 for a while, then delivers once", async () => {
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

  it.runIf(available)("keeps a change failed and visible after the last try", async () => {
    const org = await createUserWithKey(world.url, { mode: "live" });
    await attachGoogle(world, org.userId, world.google.grant());
    world.google.failNext(503, 503, 503, 503);
    const created = await call(world.url, "POST", "/v1/meetings", { key: org.key, body: { title: "Doomed", duration: "15 mins", startTime: "2031-04-05T10:00:00Z", participants: ["d@example.com"] } });
    const [invite] = await settled(world, org.key, created.body.id, 1);
    expect(invite).toMatchObject({ state: "failed", channel: "google", attempts: 4 });
    expect((invite as unknown as { lastError: string }).lastError).toMatch(/Google: 503/);
  });

  it.runIf(available)("adds busy time from the connected calendar to the day view, and leaves it out when Google is slow", async () => {
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
    world.google.delayMs = 5_000;
    try {
      const startedAt = Date.now();
      const slow = await call(world.url, "GET", "/v1/availability?date=2031-04-08", { key: user.key });
      expect(slow.status).toBe(200);
      expect(Date.now() - startedAt).toBeLessThan(4_000);
      expect(slow.body.slots).toEqual([{ start: "09:00", end: "17:00", status: "free" }]);
    } finally {
      world.google.delayMs = 0;
    }
  });

  it.runIf(available)("recommends only times the connected calendar leaves free", async () => {
    const user = await createUserWithKey(world.url, { mode: "live", timezone: "UTC" });
    await attachGoogle(world, user.userId, world.google.grant());
    world.google.busy = [
      { start: "2031-04-09T09:00:00Z", end: "2031-04-09T15:00:00Z" },
      { start: "2031-04-09T16:00:00Z", end: "2031-04-09T17:00:00Z" },
    ];
    try {
      const res = await call(world.url, "POST", "/v1/availability/recommended", {
        key: user.key,
        body: { participants: ["outsider@example.com"], duration: "1 hour", from: "2031-04-09", to: "2031-04-09" },
      });
      expect(res.status).toBe(200);
      expect(res.body.slots.map((s: { start: string; end: string }) => [s.start, s.end])).toEqual([["2031-04-09T15:00:00Z", "2031-04-09T16:00:00Z"]]);
    } finally {
      world.google.busy = [];
    }
  });
});
