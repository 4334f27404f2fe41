import { describe, expect, it } from "vitest";
import { eventually } from "@sched/testing";
import { formatTimestamp } from "@sched/proto";
import { ADMIN_TOKEN, call, createUserWithKey, expectError, WIRINGS } from "../harness.js";
import { microsoftWorldPerSuite } from "../invitesSetup.js";
import { weekdayIn } from "../days.js";

type Invite = { email: string; kind: string; sequence: number; state: string; channel: string; attempts: number; lastError: string | null };

/** How often the invites read answers back from Microsoft here: often enough for a test to wait on. */
const ANSWERS_POLL_MS = 400;

/** A whole-hour start some days ahead, inside the window answers are read back over. */
const startIn = (n: number, hour = 10) => `${weekdayIn(n)}T${String(hour).padStart(2, "0")}:00:00Z`;

describe.each(WIRINGS)("Microsoft calendars end to end (%s)", async (wiring) => {
  const suite = await microsoftWorldPerSuite(wiring, { MICROSOFT_ANSWERS_POLL_MS: String(ANSWERS_POLL_MS) });
  const { available, microsoft } = suite;

  const attach = async (userId: string, grant: { accessToken: string; refreshToken: string; expiresAt: number; accountEmail: string }) => {
    const res = await call(suite.world.url, "POST", `/admin/v1/users/${userId}/calendar-connections`, {
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
      body: { provider: "microsoft", accountEmail: grant.accountEmail, accessToken: grant.accessToken, refreshToken: grant.refreshToken, expiresAt: formatTimestamp(grant.expiresAt) },
    });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };

  const settled = async (key: string, meetingId: string, sequence: number) => {
    let last: Invite[] = [];
    return eventually(async () => {
      const res = await call(suite.world.url, "GET", `/v1/meetings/${meetingId}/invites`, { key });
      last = res.body.data as Invite[];
      return last.length > 0 && last.every((i) => i.state !== "pending") && last.some((i) => i.sequence === sequence) ? last : undefined;
    }, 20_000, 50).catch((err: unknown) => {
      throw new Error(`invites of ${meetingId} not settled at sequence ${sequence}: ${JSON.stringify(last)} (${String(err)})`);
    });
  };

  const meeting = async (key: string, body: Record<string, unknown>) => {
    const res = await call(suite.world.url, "POST", "/v1/meetings", { key, body: { duration: "1 hour", ...body } });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };

  /** The one live event of the organizer's calendar whose subject is given. */
  const storedEvent = (subject: string) => {
    const found = [...microsoft.events.values()].filter((e) => e.subject === subject && !e.removed);
    expect(found).toHaveLength(1);
    return found[0]!;
  };

  it.runIf(available)("connects with OAuth 2.0 at Microsoft's identity platform: consent URL, callback bound to the user by state, tokens sealed", async () => {
    const user = await createUserWithKey(suite.world.url, { mode: "live" });
    const started = await call(suite.world.url, "POST", "/v1/calendar-connections/microsoft", { key: user.key });
    expect(started.status).toBe(201);
    const consent = new URL(started.body.authorizationUrl);
    expect(consent.origin + consent.pathname).toBe(`${microsoft.url}/common/oauth2/v2.0/authorize`);
    expect(consent.searchParams.get("client_id")).toBe(microsoft.clientId);
    expect(consent.searchParams.get("response_type")).toBe("code");
    expect(consent.searchParams.get("scope")!.split(" ")).toEqual(expect.arrayContaining(["offline_access", "Calendars.ReadWrite"]));
    const redirectUri = consent.searchParams.get("redirect_uri")!;
    const state = consent.searchParams.get("state")!;
    expect(state.length).toBeGreaterThanOrEqual(40);

    // A Google consent's state does not complete a Microsoft connection.
    const google = await call(suite.world.url, "POST", "/v1/calendar-connections/google", { key: user.key });
    const googleState = new URL(google.body.authorizationUrl).searchParams.get("state")!;
    expectError(await call(suite.world.url, "GET", `/v1/calendar-connections/microsoft/callback?state=${googleState}&code=x`), 400, "invalid_request");

    const code = microsoft.issueCode("Ann@Contoso.example", redirectUri);
    const back = await call(suite.world.url, "GET", `/v1/calendar-connections/microsoft/callback?code=${encodeURIComponent(code)}&state=${state}&session_state=abc-123`);
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({ provider: "microsoft", accountEmail: "ann@contoso.example", status: "active", busyCalendars: null });
    expect(microsoft.tokenCalls().at(-1)!.body).toMatchObject({ grant_type: "authorization_code", code, client_id: microsoft.clientId, redirect_uri: redirectUri });
    expectError(await call(suite.world.url, "GET", `/v1/calendar-connections/microsoft/callback?state=${state}&code=${encodeURIComponent(code)}`), 400, "invalid_request");
    const refused = await call(suite.world.url, "POST", "/v1/calendar-connections/microsoft", { key: user.key });
    const refusedState = new URL(refused.body.authorizationUrl).searchParams.get("state")!;
    expectError(await call(suite.world.url, "GET", `/v1/calendar-connections/microsoft/callback?state=${refusedState}&error=access_denied&error_description=The+user+declined`), 400, "invalid_request");

    const list = await call(suite.world.url, "GET", "/v1/calendar-connections", { key: user.key });
    expect(list.body.data).toEqual([back.body]);
    const rows = (await suite.world.sys.system.database("invites")("calendar_connections").where({ user_id: user.userId })) as Array<{ sealed_tokens: string }>;
    const issued = microsoft.calls.find((c) => c.body?.code === code);
    expect(issued).toBeDefined();
    expect(rows[0]!.sealed_tokens).not.toMatch(/EwB|M\.R3_/);
    const other = await createUserWithKey(suite.world.url, { mode: "live" });
    expectError(await call(suite.world.url, "DELETE", `/v1/calendar-connections/${back.body.id}`, { key: other.key }), 404, "not_found");
    // Busy time is asked by address: a Microsoft grant attached without one is refused rather than kept useless.
    const grant = microsoft.grant("noaddress@contoso.example");
    const bare = await call(suite.world.url, "POST", `/admin/v1/users/${other.userId}/calendar-connections`, {
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
      body: { provider: "microsoft", accessToken: grant.accessToken, refreshToken: grant.refreshToken },
    });
    expectError(bare, 400, "invalid_request");
    expect(bare.body.error.param).toBe("accountEmail");
  });

  it.runIf(available)("creates one Graph event with the participants as attendees, patches it on update, and cancels it", async () => {
    const org = await createUserWithKey(suite.world.url, { mode: "live" });
    await attach(org.userId, microsoft.grant("org1@contoso.example"));
    const start = startIn(20, 13);
    const id = await meeting(org.key, { title: "Roadmap M", startTime: start, participants: ["p1@example.com", "p2@example.com"] });
    const first = await settled(org.key, id, 1);
    expect(first.map((i) => [i.email, i.state, i.channel])).toEqual([
      ["p1@example.com", "sent", "microsoft"],
      ["p2@example.com", "sent", "microsoft"],
    ]);
    const event = storedEvent("Roadmap M");
    expect(event.transactionId).toMatch(/^sched-[0-9a-f]{40}$/);
    expect(event.start).toEqual({ dateTime: start.replace("Z", ""), timeZone: "UTC" });
    expect(event.attendees.map((a) => a.emailAddress.address)).toEqual(["p1@example.com", "p2@example.com"]);
    expect(suite.world.smtp.to("p1@example.com")).toHaveLength(0);

    const moved = startIn(20, 15);
    await call(suite.world.url, "PATCH", `/v1/meetings/${id}`, { key: org.key, body: { participants: ["p1@example.com"], startTime: moved } });
    const second = await settled(org.key, id, 2);
    expect(second.map((i) => [i.email, i.kind, i.state, i.channel])).toEqual([
      ["p1@example.com", "request", "sent", "microsoft"],
      ["p2@example.com", "cancel", "sent", "microsoft"],
    ]);
    const patch = microsoft.graphCalls().find((c) => c.method === "PATCH" && decodeURIComponent(c.path) === `/v1.0/me/events/${event.id}`)!;
    expect(patch.body).toMatchObject({ subject: "Roadmap M", attendees: [{ emailAddress: { address: "p1@example.com" } }] });
    expect(event.start.dateTime).toBe(moved.replace("Z", ""));
    expect(event.attendees.map((a) => a.emailAddress.address)).toEqual(["p1@example.com"]);

    await call(suite.world.url, "PATCH", `/v1/meetings/${id}`, { key: org.key, body: { status: "cancelled" } });
    await settled(org.key, id, 3);
    expect(microsoft.graphCalls().some((c) => c.method === "POST" && decodeURIComponent(c.path) === `/v1.0/me/events/${event.id}/cancel`)).toBe(true);
    expect(event).toMatchObject({ isCancelled: true, removed: true });
  });

  it.runIf(available)("creates the event once when Graph's answer is lost and the create is tried again (transactionId)", async () => {
    const org = await createUserWithKey(suite.world.url, { mode: "live" });
    await attach(org.userId, microsoft.grant("org2@contoso.example"));
    microsoft.loseNextAnswer((c) => c.body?.subject === "Lost answer");
    const id = await meeting(org.key, { title: "Lost answer", startTime: startIn(21), participants: ["once@example.com"] });
    const [invite] = await settled(org.key, id, 1);
    expect(invite).toMatchObject({ state: "sent", channel: "microsoft" });
    expect(invite!.attempts).toBeGreaterThanOrEqual(2);
    const creates = microsoft.graphCalls().filter((c) => c.method === "POST" && c.path === "/v1.0/me/events" && c.body?.subject === "Lost answer");
    expect(creates.length).toBeGreaterThanOrEqual(2);
    expect(new Set(creates.map((c) => c.body?.transactionId)).size).toBe(1);
    storedEvent("Lost answer");
    expect([...microsoft.events.values()].filter((e) => e.subject === "Lost answer")).toHaveLength(1);
  });

  it.runIf(available)("retries Graph answering 503 and 429, then delivers once", async () => {
    const org = await createUserWithKey(suite.world.url, { mode: "live" });
    await attach(org.userId, microsoft.grant("org3@contoso.example"));
    microsoft.failNext([503, 429], (c) => c.body?.subject === "Bumpy M");
    const id = await meeting(org.key, { title: "Bumpy M", startTime: startIn(22), participants: ["b1@example.com"] });
    const [invite] = await settled(org.key, id, 1);
    expect(invite).toMatchObject({ state: "sent", channel: "microsoft", attempts: 3 });
    storedEvent("Bumpy M");
  });

  it.runIf(available)("refreshes an expired access token and stores the new one", async () => {
    const org = await createUserWithKey(suite.world.url, { mode: "live" });
    const grant = microsoft.grant("org4@contoso.example", { accessExpiresInMs: -1_000 });
    await attach(org.userId, grant);
    const id = await meeting(org.key, { title: "Fresh M", startTime: startIn(23), participants: ["r@example.com"] });
    expect((await settled(org.key, id, 1))[0]).toMatchObject({ state: "sent", channel: "microsoft" });
    expect(microsoft.tokenCalls().some((c) => c.body?.grant_type === "refresh_token" && c.body.refresh_token === grant.refreshToken)).toBe(true);
    const create = microsoft.graphCalls().find((c) => c.body?.subject === "Fresh M")!;
    expect(create.accessToken).not.toBe(grant.accessToken);
    // The refreshed tokens were stored: the next meeting uses them without refreshing again.
    const refreshes = microsoft.tokenCalls().length;
    const next = await meeting(org.key, { title: "Fresh M again", startTime: startIn(23, 12), participants: ["r@example.com"] });
    expect((await settled(org.key, next, 1))[0]).toMatchObject({ state: "sent", channel: "microsoft" });
    expect(microsoft.tokenCalls()).toHaveLength(refreshes);
    expect(microsoft.graphCalls().find((c) => c.body?.subject === "Fresh M again")!.accessToken).toBe(create.accessToken);
  });

  it.runIf(available)("marks a revoked grant broken and sends the invites by e-mail instead", async () => {
    const org = await createUserWithKey(suite.world.url, { mode: "live" });
    const grant = microsoft.grant("org5@contoso.example");
    const connectionId = await attach(org.userId, grant);
    microsoft.revoke(grant.refreshToken);
    const id = await meeting(org.key, { title: "Fallback M", startTime: startIn(24), participants: ["fbm@example.com"] });
    expect((await settled(org.key, id, 1))[0]).toMatchObject({ state: "sent", channel: "email" });
    expect(suite.world.smtp.to("fbm@example.com")).toHaveLength(1);
    const list = await call(suite.world.url, "GET", "/v1/calendar-connections", { key: org.key });
    expect(list.body.data).toEqual([expect.objectContaining({ id: connectionId, provider: "microsoft", status: "broken" })]);
  });

  it.runIf(available)("adds busy time from getSchedule to the day view and recommendations, counts the events it holds, and leaves it out when Graph is slow, saying so", async () => {
    const user = await createUserWithKey(suite.world.url, { mode: "live", timezone: "UTC" });
    const grant = microsoft.grant("busy@contoso.example");
    await attach(user.userId, grant);
    const day = weekdayIn(30);
    microsoft.busy.set("busy@contoso.example", [{ start: `${day}T10:00:00Z`, end: `${day}T11:30:00Z` }]);
    // An event in the mailbox (made there directly) is busy time too.
    const other = await createUserWithKey(suite.world.url, { mode: "live" });
    await attach(other.userId, microsoft.grant("busy@contoso.example"));
    const id = await meeting(other.key, { title: "Held M", startTime: `${day}T14:00:00Z`, participants: ["x@example.com"] });
    await settled(other.key, id, 1);
    const view = await call(suite.world.url, "GET", `/v1/availability?date=${day}`, { key: user.key });
    expect(view.status).toBe(200);
    expect(view.body.busyComplete).toBeUndefined();
    expect(view.body.slots).toEqual([
      { start: "09:00", end: "10:00", status: "free" },
      { start: "10:00", end: "11:30", status: "busy" },
      { start: "11:30", end: "14:00", status: "free" },
      { start: "14:00", end: "15:00", status: "busy" },
      { start: "15:00", end: "17:00", status: "free" },
    ]);
    // Recommended times keep clear of it, and say nothing is missing.
    const recommended = await call(suite.world.url, "POST", "/v1/availability/recommended", { key: user.key, body: { participants: [user.email], duration: "1 hour", from: day, to: day, limit: 50 } });
    expect(recommended.status).toBe(200);
    expect(recommended.body.slots.length).toBeGreaterThan(0);
    for (const slot of recommended.body.slots as { start: string; end: string }[]) {
      for (const [start, end] of [["10:00", "11:30"], ["14:00", "15:00"]]) expect(slot.start < `${day}T${end}:00Z` && slot.end > `${day}T${start}:00Z`).toBe(false);
    }
    expect(recommended.body.busyComplete).toBeUndefined();
    expect(recommended.body.incompleteBusy).toBeUndefined();
    const asked = microsoft.graphCalls().find((c) => c.path === "/v1.0/me/calendar/getSchedule" && c.accessToken === grant.accessToken)!;
    expect(asked.body).toMatchObject({ schedules: ["busy@contoso.example"], startTime: { dateTime: `${day}T09:00:00`, timeZone: "UTC" }, endTime: { dateTime: `${day}T17:00:00`, timeZone: "UTC" } });
    microsoft.delayMs = 5_000;
    try {
      const startedAt = Date.now();
      const slow = await call(suite.world.url, "GET", `/v1/availability?date=${weekdayIn(33)}`, { key: user.key });
      expect(slow.status).toBe(200);
      expect(Date.now() - startedAt).toBeLessThan(4_000);
      expect(slow.body.slots).toEqual([{ start: "09:00", end: "17:00", status: "free" }]);
      // The answer says which calendar it went without, rather than passing the time off as free.
      expect(slow.body).toMatchObject({ busyComplete: false, missingCalendars: ["microsoft"] });
      const freeBusy = await call(suite.world.url, "POST", "/v1/availability/free-busy", { key: user.key, body: { participants: [user.email], from: weekdayIn(35), to: weekdayIn(35) } });
      expect(freeBusy.status).toBe(200);
      expect(freeBusy.body.people).toEqual([{ email: user.email, busy: [], busyComplete: false, missingCalendars: ["microsoft"] }]);
      const recommendedSlow = await call(suite.world.url, "POST", "/v1/availability/recommended", { key: user.key, body: { participants: [user.email], duration: "1 hour", from: weekdayIn(40), to: weekdayIn(40) } });
      expect(recommendedSlow.status).toBe(200);
      expect(recommendedSlow.body).toMatchObject({ busyComplete: false, incompleteBusy: [{ email: user.email, missingCalendars: ["microsoft"] }] });
    } finally {
      microsoft.delayMs = 0;
    }
  });

  it.runIf(available)("reads attendees' answers back from the organizer's calendar, one calendar view per connection a round", async () => {
    const org = await createUserWithKey(suite.world.url, { mode: "live" });
    const grant = microsoft.grant("org6@contoso.example");
    await attach(org.userId, grant);
    const first = await meeting(org.key, { title: "Answered M", startTime: startIn(5), participants: ["yes@example.com", "maybe@example.com", "no@example.com"] });
    const second = await meeting(org.key, { title: "Answered M2", startTime: startIn(6), participants: ["yes@example.com"] });
    await settled(org.key, first, 1);
    await settled(org.key, second, 1);
    const event = storedEvent("Answered M");
    microsoft.respond(event.id, "yes@example.com", "accepted");
    microsoft.respond(event.id, "maybe@example.com", "tentativelyAccepted");
    microsoft.respond(event.id, "no@example.com", "declined", new Date(Date.now() - 60_000));
    microsoft.respond(storedEvent("Answered M2").id, "yes@example.com", "declined");
    const attendees = await eventually(async () => {
      const res = await call(suite.world.url, "GET", `/v1/meetings/${first}`, { key: org.key });
      const byEmail = Object.fromEntries((res.body.attendees as Array<{ email: string; response: string; respondedAt: string | null }>).map((a) => [a.email, a]));
      return byEmail["no@example.com"]?.response === "declined" && byEmail["maybe@example.com"]?.response === "tentative" ? byEmail : undefined;
    }, 15_000, 100);
    expect(attendees["yes@example.com"]!.response).toBe("accepted");
    expect(attendees["no@example.com"]!.respondedAt).not.toBeNull();
    await eventually(async () => {
      const res = await call(suite.world.url, "GET", `/v1/meetings/${second}`, { key: org.key });
      return (res.body.attendees as Array<{ response: string }>)[0]?.response === "declined" ? true : undefined;
    }, 15_000, 100);
    // Every read of this calendar was a calendar view (never one request per meeting), at most one a round.
    const reads = () => microsoft.graphCalls().filter((c) => c.method === "GET" && c.accessToken === grant.accessToken);
    expect(reads().length).toBeGreaterThan(0);
    expect(reads().every((c) => c.path === "/v1.0/me/calendarView")).toBe(true);
    const before = reads().length;
    const since = Date.now();
    await new Promise((r) => setTimeout(r, ANSWERS_POLL_MS * 5));
    expect(reads().length - before).toBeLessThanOrEqual(Math.ceil((Date.now() - since) / ANSWERS_POLL_MS) + 1);
  });

  it.runIf(available)("never calls Microsoft for test keys", async () => {
    const user = await createUserWithKey(suite.world.url, { mode: "test", timezone: "UTC" });
    const grant = microsoft.grant("test@contoso.example");
    await attach(user.userId, grant);
    const id = await meeting(user.key, { title: "Test mode M", startTime: startIn(40), participants: ["t@example.com"] });
    const invites = await settled(user.key, id, 1);
    expect(invites[0]).toMatchObject({ state: "simulated" });
    expect((await call(suite.world.url, "GET", `/v1/availability?date=${weekdayIn(40)}`, { key: user.key })).status).toBe(200);
    expect(microsoft.calls.filter((c) => c.accessToken === grant.accessToken || c.body?.refresh_token === grant.refreshToken)).toEqual([]);
  });
});
