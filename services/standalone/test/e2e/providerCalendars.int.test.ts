import { describe, expect, it } from "vitest";
import { eventually } from "@sched/testing";
import { call, createUserWithKey, expectError, WIRINGS } from "../harness.js";
import { attachGoogle, attachMicrosoft, microsoftWorldPerSuite } from "../invitesSetup.js";
import { weekdayIn } from "../days.js";


type Listed = { id: string; name: string; busy: boolean };

const DAY_MS = 86_400_000;
/** Answers are read back this far ahead here: more than the 1,825 days one Graph calendar view may span. */
const ANSWERS_WINDOW_DAYS = 2_000;

/** A working day whose busy time comes from exactly the chosen calendars: 10–11 main, 13–14 work; family's 15–16 is not chosen. */
const CHOSEN_DAY = [
  { start: "09:00", end: "10:00", status: "free" },
  { start: "10:00", end: "11:00", status: "busy" },
  { start: "11:00", end: "13:00", status: "free" },
  { start: "13:00", end: "14:00", status: "busy" },
  { start: "14:00", end: "17:00", status: "free" },
];

describe.each(WIRINGS)("several calendars of Google and Microsoft connections (%s)", async (wiring) => {
  const suite = await microsoftWorldPerSuite(wiring, {
    MICROSOFT_ANSWERS_POLL_MS: "400",
    PROVIDER_ANSWERS_WINDOW_DAYS: String(ANSWERS_WINDOW_DAYS),
    // What is tested is which calendars are read, not the deadline: a busy machine must not make the answers late.
    FREEBUSY_TIMEOUT_MS: "10000",
  });
  const { available, microsoft } = suite;

  const choose = async (key: string, connectionId: string, busyCalendars: string[]) => {
    const res = await call(suite.world.url, "PATCH", `/v1/calendar-connections/${connectionId}`, { key, body: { busyCalendars } });
    expect(res.status).toBe(200);
    expect(res.body.busyCalendars).toEqual(busyCalendars);
  };

  it.runIf(available)("lists a Google account's calendars, counts busy time from exactly the chosen two of three in one freeBusy request", async () => {
    const user = await createUserWithKey(suite.world.url, { mode: "live", timezone: "UTC" });
    const grant = suite.world.google.grant();
    const connectionId = await attachGoogle(suite.world, user.userId, grant);
    const day = weekdayIn(30);
    suite.world.google.calendarList.push(
      { id: "work@group.calendar.google.com", summary: "Work", accessRole: "reader" },
      { id: "family@group.calendar.google.com", summary: "Family", accessRole: "freeBusyReader" },
    );
    suite.world.google.calendarBusy.set("primary", [{ start: `${day}T10:00:00Z`, end: `${day}T11:00:00Z` }]);
    suite.world.google.calendarBusy.set("work@group.calendar.google.com", [{ start: `${day}T13:00:00Z`, end: `${day}T14:00:00Z` }]);
    suite.world.google.calendarBusy.set("family@group.calendar.google.com", [{ start: `${day}T15:00:00Z`, end: `${day}T16:00:00Z` }]);

    const listed = await call(suite.world.url, "GET", `/v1/calendar-connections/${connectionId}/calendars`, { key: user.key });
    expect(listed.status).toBe(200);
    // The primary calendar goes by `primary` (what was chosen before other calendars could be) and alone counts until the user chooses.
    expect(listed.body.data as Listed[]).toEqual([
      { id: "primary", name: "owner@example.com", busy: true },
      { id: "work@group.calendar.google.com", name: "Work", busy: false },
      { id: "family@group.calendar.google.com", name: "Family", busy: false },
    ]);
    expect(suite.world.google.calendarCalls().filter((c) => c.accessToken === grant.accessToken).map((c) => `${c.method} ${c.path}`)).toEqual(["GET /calendar/v3/users/me/calendarList"]);

    // Only calendars the account lists can be chosen.
    const foreign = await call(suite.world.url, "PATCH", `/v1/calendar-connections/${connectionId}`, { key: user.key, body: { busyCalendars: ["primary", "someone-else@example.com"] } });
    expectError(foreign, 400, "invalid_request");
    expect(foreign.body.error.param).toBe("busyCalendars");

    await choose(user.key, connectionId, ["primary", "work@group.calendar.google.com"]);
    const after = await call(suite.world.url, "GET", `/v1/calendar-connections/${connectionId}/calendars`, { key: user.key });
    expect((after.body.data as Listed[]).map((c) => [c.id, c.busy])).toEqual([
      ["primary", true],
      ["work@group.calendar.google.com", true],
      ["family@group.calendar.google.com", false],
    ]);

    const callsBefore = suite.world.google.calendarCalls().length;
    const view = await call(suite.world.url, "GET", `/v1/availability?date=${day}`, { key: user.key });
    expect(view.status).toBe(200);
    expect(view.body.busyComplete).toBeUndefined();
    expect(view.body.slots).toEqual(CHOSEN_DAY);
    const asked = suite.world.google.calendarCalls().slice(callsBefore).filter((c) => c.accessToken === grant.accessToken);
    expect(asked).toHaveLength(1);
    expect(asked[0]!.path).toBe("/calendar/v3/freeBusy");
    expect(asked[0]!.body).toMatchObject({ items: [{ id: "primary" }, { id: "work@group.calendar.google.com" }] });

    // A chosen calendar Google no longer answers for leaves the person's busy time incomplete rather than free.
    suite.world.google.calendarList.splice(1, 1);
    const gone = await call(suite.world.url, "GET", `/v1/availability?date=${weekdayIn(33)}`, { key: user.key });
    expect(gone.body).toMatchObject({ busyComplete: false, missingCalendars: ["google"] });
  });

  it.runIf(available)("lists a Microsoft mailbox's calendars, counts busy time from exactly the chosen two of three: getSchedule for the main one, a calendar view for the other", async () => {
    const user = await createUserWithKey(suite.world.url, { mode: "live", timezone: "UTC" });
    const account = "several@contoso.example";
    const grant = microsoft.grant(account);
    const connectionId = await attachMicrosoft(suite.world, user.userId, grant);
    const day = weekdayIn(30);
    const main = microsoft.calendarsOf(account)[0]!.id;
    const work = microsoft.addCalendar(account, "Work");
    const family = microsoft.addCalendar(account, "Family");
    microsoft.addEvent(account, main, { subject: "Own", start: `${day}T10:00:00Z`, end: `${day}T11:00:00Z` });
    microsoft.addEvent(account, work, { subject: "Review", start: `${day}T13:00:00Z`, end: `${day}T14:00:00Z` });
    // Shown as free: in a chosen calendar, yet no busy time.
    microsoft.addEvent(account, work, { subject: "Lunch maybe", start: `${day}T11:30:00Z`, end: `${day}T12:30:00Z`, showAs: "free" });
    microsoft.addEvent(account, family, { subject: "School", start: `${day}T15:00:00Z`, end: `${day}T16:00:00Z` });

    const listed = await call(suite.world.url, "GET", `/v1/calendar-connections/${connectionId}/calendars`, { key: user.key });
    expect(listed.status).toBe(200);
    expect(listed.body.data as Listed[]).toEqual([
      { id: "primary", name: "Calendar", busy: true },
      { id: work, name: "Work", busy: false },
      { id: family, name: "Family", busy: false },
    ]);
    const stranger = await createUserWithKey(suite.world.url, { mode: "live" });
    expectError(await call(suite.world.url, "GET", `/v1/calendar-connections/${connectionId}/calendars`, { key: stranger.key }), 404, "not_found");

    await choose(user.key, connectionId, ["primary", work]);
    const callsBefore = microsoft.graphCalls().length;
    const view = await call(suite.world.url, "GET", `/v1/availability?date=${day}`, { key: user.key });
    expect(view.status).toBe(200);
    expect(view.body.busyComplete).toBeUndefined();
    expect(view.body.slots).toEqual(CHOSEN_DAY);
    // Two requests for two calendars: getSchedule answers per mailbox (its default calendar), the other calendar by its view.
    const asked = microsoft.graphCalls().slice(callsBefore).filter((c) => c.accessToken === grant.accessToken);
    expect(asked.map((c) => `${c.method} ${decodeURIComponent(c.path)}`).sort()).toEqual([`GET /v1.0/me/calendars/${work}/calendarView`, "POST /v1.0/me/calendar/getSchedule"]);

    // The main calendar left out: the two others, each by its view.
    await choose(user.key, connectionId, [work, family]);
    const others = await call(suite.world.url, "GET", `/v1/availability?date=${day}`, { key: user.key });
    expect(others.body.slots).toEqual([
      { start: "09:00", end: "13:00", status: "free" },
      { start: "13:00", end: "14:00", status: "busy" },
      { start: "14:00", end: "15:00", status: "free" },
      { start: "15:00", end: "16:00", status: "busy" },
      { start: "16:00", end: "17:00", status: "free" },
    ]);
  });

  it.runIf(available)("reads answers back over a window longer than one calendar view may span, in views of at most 1,825 days", async () => {
    const org = await createUserWithKey(suite.world.url, { mode: "live" });
    const account = "farahead@contoso.example";
    const grant = microsoft.grant(account);
    await attachMicrosoft(suite.world, org.userId, grant);
    // The fake refuses a longer view as Graph does, so one view over the whole window would read nothing.
    const tooLong = await fetch(`${microsoft.url}/v1.0/me/calendarView?startDateTime=${new Date().toISOString()}&endDateTime=${new Date(Date.now() + 1_826 * DAY_MS).toISOString()}`, { headers: { Authorization: `Bearer ${grant.accessToken}` } });
    expect(tooLong.status).toBe(400);
    expect(((await tooLong.json()) as { error: { message: string } }).error.message).toMatch(/Maximum number of days: 1825/);
    const callsBefore = microsoft.graphCalls().length;

    const start = `${new Date(Date.now() + 1_900 * DAY_MS).toISOString().slice(0, 10)}T10:00:00Z`;
    const created = await call(suite.world.url, "POST", "/v1/meetings", { key: org.key, body: { title: "Far ahead M", duration: "30 mins", startTime: start, participants: ["far@example.com"] } });
    expect(created.status).toBe(201);
    const event = await eventually(() => [...microsoft.events.values()].find((e) => e.subject === "Far ahead M" && !e.removed), 20_000, 50);
    microsoft.respond(event.id, "far@example.com", "accepted");
    await eventually(async () => {
      const res = await call(suite.world.url, "GET", `/v1/meetings/${created.body.id as string}`, { key: org.key });
      return (res.body.attendees as Array<{ response: string }>)[0]?.response === "accepted" ? true : undefined;
    }, 20_000, 100);
    const views = microsoft.graphCalls().slice(callsBefore).filter((c) => c.accessToken === grant.accessToken && c.path === "/v1.0/me/calendarView" && !c.query.$skip);
    expect(views.length).toBeGreaterThanOrEqual(2);
    for (const view of views) expect(Date.parse(view.query.endDateTime!) - Date.parse(view.query.startDateTime!)).toBeLessThanOrEqual(1_825 * DAY_MS);
    // One round's views follow each other without a gap, from a day ago to the end of the window.
    const [first, second] = views;
    expect(second!.query.startDateTime).toBe(first!.query.endDateTime);
    expect(Date.parse(second!.query.endDateTime!) - Date.parse(first!.query.startDateTime!)).toBe((ANSWERS_WINDOW_DAYS + 1) * DAY_MS);
  });

  it.runIf(available)("sends invites through the connection made the default, through Google while none is, and keeps one default a user", async () => {
    const user = await createUserWithKey(suite.world.url, { mode: "live", timezone: "UTC" });
    const googleId = await attachGoogle(suite.world, user.userId, suite.world.google.grant());
    const microsoftId = await attachMicrosoft(suite.world, user.userId, microsoft.grant("both@contoso.example"));
    const channelOf = async (title: string) => {
      const created = await call(suite.world.url, "POST", "/v1/meetings", { key: user.key, body: { title, duration: "30 mins", startTime: `${weekdayIn(40)}T09:00:00Z`, participants: ["guest@example.com"] } });
      expect(created.status).toBe(201);
      const invites = await eventually(async () => {
        const res = await call(suite.world.url, "GET", `/v1/meetings/${created.body.id as string}/invites`, { key: user.key });
        const data = res.body.data as { state: string; channel: string }[];
        return data.length === 1 && data[0]!.state === "sent" ? data : undefined;
      }, 20_000, 100);
      return invites[0]!.channel;
    };
    const defaults = async () => {
      const res = await call(suite.world.url, "GET", "/v1/calendar-connections", { key: user.key });
      return Object.fromEntries((res.body.data as { id: string; default: boolean }[]).map((c) => [c.id, c.default]));
    };

    expect(await defaults()).toEqual({ [googleId]: false, [microsoftId]: false });
    expect(await channelOf("No default")).toBe("google");

    expect((await call(suite.world.url, "PATCH", `/v1/calendar-connections/${microsoftId}`, { key: user.key, body: { default: true } })).body.default).toBe(true);
    expect(await channelOf("Microsoft the default")).toBe("microsoft");
    expect([...microsoft.events.values()].filter((e) => e.subject === "Microsoft the default" && !e.removed)).toHaveLength(1);

    expect((await call(suite.world.url, "PATCH", `/v1/calendar-connections/${googleId}`, { key: user.key, body: { default: true } })).body.default).toBe(true);
    expect(await defaults()).toEqual({ [googleId]: true, [microsoftId]: false });
    expect(await channelOf("Google the default")).toBe("google");
    expect([...microsoft.events.values()].filter((e) => e.subject === "Google the default")).toEqual([]);
  });

  it.runIf(available)("never lists a connection's calendars for a test key", async () => {
    const user = await createUserWithKey(suite.world.url, { mode: "test" });
    const grant = suite.world.google.grant();
    const connectionId = await attachGoogle(suite.world, user.userId, grant);
    expectError(await call(suite.world.url, "GET", `/v1/calendar-connections/${connectionId}/calendars`, { key: user.key }), 403, "forbidden");
    expect(suite.world.google.calls.filter((c) => c.accessToken === grant.accessToken)).toEqual([]);
  });
});
