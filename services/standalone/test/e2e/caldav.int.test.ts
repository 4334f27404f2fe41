import { eventually } from "@sched/testing";
import ICAL from "ical.js";
import { describe, expect, it } from "vitest";
import { call, createUserWithKey, expectError, systemPerSuite, WIRINGS } from "../harness.js";
import { startInvitesWorld, type InvitesWorld } from "../invitesSetup.js";
import { Radicale, radicaleInstalled } from "@sched/testing/radicale";

const DAY = "2031-06-04";
const PASSWORD = "app-password-1";

/** One event as a calendar app would store it. */
const event = (uid: string, start: string, end: string) =>
  ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN", "BEGIN:VEVENT", `UID:${uid}`, "DTSTAMP:20310101T000000Z", `DTSTART:${start}`, `DTEND:${end}`, "SUMMARY:Own", "END:VEVENT", "END:VCALENDAR", ""].join("\r\n");

/** Europe/Berlin as calendar apps write it: summer time from the last Sunday of March (30 March 2031). */
const BERLIN = [
  ...["BEGIN:VTIMEZONE", "TZID:Europe/Berlin"],
  ...["BEGIN:DAYLIGHT", "TZOFFSETFROM:+0100", "TZOFFSETTO:+0200", "TZNAME:CEST", "DTSTART:19700329T020000", "RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU", "END:DAYLIGHT"],
  ...["BEGIN:STANDARD", "TZOFFSETFROM:+0200", "TZOFFSETTO:+0100", "TZNAME:CET", "DTSTART:19701025T030000", "RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU", "END:STANDARD"],
  "END:VTIMEZONE",
];

/**
 * A weekly Thursday 09:00–10:00 Berlin series from 6 March 2031 as a calendar
 * app stores it: one object, 27 March left out (EXDATE), 3 April moved to
 * Friday 4 April 14:00–15:30 (a VEVENT with its RECURRENCE-ID).
 */
const STANDUP = [
  ...["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN", ...BERLIN],
  ...["BEGIN:VEVENT", "UID:standup", "DTSTAMP:20310101T000000Z", "DTSTART;TZID=Europe/Berlin:20310306T090000", "DTEND;TZID=Europe/Berlin:20310306T100000"],
  ...["RRULE:FREQ=WEEKLY;BYDAY=TH", "EXDATE;TZID=Europe/Berlin:20310327T090000", "SUMMARY:Standup", "END:VEVENT"],
  ...["BEGIN:VEVENT", "UID:standup", "DTSTAMP:20310101T000000Z", "RECURRENCE-ID;TZID=Europe/Berlin:20310403T090000"],
  ...["DTSTART;TZID=Europe/Berlin:20310404T140000", "DTEND;TZID=Europe/Berlin:20310404T153000", "SUMMARY:Standup (moved)", "END:VEVENT"],
  ...["END:VCALENDAR", ""],
].join("\r\n");

describe.each(WIRINGS)("CalDAV calendars (%s)", async (wiring) => {
  let radicale: Radicale;
  let world: InvitesWorld;
  const suite = await systemPerSuite(wiring, async () => {
    radicale = new Radicale({ ann: PASSWORD, rea: PASSWORD, max: PASSWORD });
    await radicale.start();
    world = await startInvitesWorld(wiring, { CALDAV_ANSWERS_POLL_MS: "300" });
    return { ...world.sys, stop: async () => {
      await world.stop();
      await radicale.stop();
    } };
  });
  const available = suite.available && radicaleInstalled();

  /** Ann's two calendars on the server, each with one event of DAY. */
  const seedCalendars = async () => {
    const own = await radicale.client("ann");
    for (const [name, start, end] of [["work", "T100000Z", "T110000Z"], ["home", "T130000Z", "T140000Z"]] as const) {
      const url = `${radicale.url}ann/${name}/`;
      await own.makeCalendar({ url, props: { displayname: name } });
      const created = await own.createCalendarObject({ calendar: { url }, iCalString: event(`${name}-own`, `${DAY.replace(/-/g, "")}${start}`, `${DAY.replace(/-/g, "")}${end}`), filename: `${name}-own.ics` });
      expect(created.status).toBe(201);
    }
    return { work: `${radicale.url}ann/work/`, home: `${radicale.url}ann/home/` };
  };

  it.runIf(available)("connects only with the right password, keeps it sealed, counts busy time from the chosen calendars, sends invites through the calendar and reads the answers back", async () => {
    const ann = await createUserWithKey(suite.url, { mode: "live", timezone: "UTC" });
    const calendars = await seedCalendars();

    const wrong = await call(suite.url, "POST", "/v1/calendar-connections/caldav", { key: ann.key, body: { serverUrl: radicale.url, username: "ann", password: "not-it" } });
    expectError(wrong, 400, "invalid_request");
    expect(wrong.body.error.param).toBe("password");
    expect(wrong.body.error.message).toMatch(/refused the username or password/);
    const asTest = await createUserWithKey(suite.url, { mode: "test" });
    expectError(await call(suite.url, "POST", "/v1/calendar-connections/caldav", { key: asTest.key, body: { serverUrl: radicale.url, username: "ann", password: PASSWORD } }), 403, "forbidden");
    expect((await call(suite.url, "GET", "/v1/calendar-connections", { key: ann.key })).body.data).toEqual([]);

    const connected = await call(suite.url, "POST", "/v1/calendar-connections/caldav", { key: ann.key, body: { serverUrl: radicale.url, username: "ann", password: PASSWORD } });
    expect(connected.status).toBe(201);
    expect(connected.body).toMatchObject({ provider: "caldav", serverUrl: radicale.url, status: "active", default: false, busyCalendars: null });
    expect(JSON.stringify(connected.body)).not.toContain(PASSWORD);
    const id = connected.body.id as string;
    const stored = await suite.sys.system.database("invites")("calendar_connections").where({ id }).first();
    expect(JSON.stringify(stored)).not.toContain(PASSWORD);

    const listed = await call(suite.url, "GET", `/v1/calendar-connections/${id}/calendars`, { key: ann.key });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((c: { id: string; name: string; busy: boolean }) => [c.id, c.name, c.busy]).sort()).toEqual([
      [calendars.home, "home", true],
      [calendars.work, "work", true],
    ]);

    // Only calendars of the connection can be chosen: another URL would be read with the user's password.
    const foreign = await call(suite.url, "PATCH", `/v1/calendar-connections/${id}`, { key: ann.key, body: { busyCalendars: [calendars.work, "http://169.254.169.254/latest/"] } });
    expectError(foreign, 400, "invalid_request");
    expect(foreign.body.error.param).toBe("busyCalendars");

    // Only work counts: its 10:00 event is busy, home's 13:00 one is not.
    const chosen = await call(suite.url, "PATCH", `/v1/calendar-connections/${id}`, { key: ann.key, body: { busyCalendars: [calendars.work] } });
    expect(chosen.body.busyCalendars).toEqual([calendars.work]);
    expect((await call(suite.url, "GET", `/v1/calendar-connections/${id}/calendars`, { key: ann.key })).body.data.find((c: { id: string }) => c.id === calendars.home).busy).toBe(false);
    const day = await call(suite.url, "GET", `/v1/availability?date=${DAY}`, { key: ann.key });
    expect(day.body.slots).toEqual([
      { start: "09:00", end: "10:00", status: "free" },
      { start: "10:00", end: "11:00", status: "busy" },
      { start: "11:00", end: "17:00", status: "free" },
    ]);

    // The default connection carries the invites: an event in the work calendar with the participants as ATTENDEEs.
    const made = await call(suite.url, "PATCH", `/v1/calendar-connections/${id}`, { key: ann.key, body: { default: true } });
    expect(made.body.default).toBe(true);
    const meeting = await call(suite.url, "POST", "/v1/meetings", { key: ann.key, body: { title: "Kickoff", duration: "30 mins", startTime: `${DAY}T15:00:00Z`, participants: ["bo@example.com", "cy@example.com"] } });
    const meetingId = meeting.body.id as string;
    const invites = async (sequence: number) =>
      eventually(async () => {
        const res = await call(suite.url, "GET", `/v1/meetings/${meetingId}/invites`, { key: ann.key });
        const data = res.body.data as { email: string; state: string; channel: string; sequence: number }[];
        return data.length > 0 && data.every((i) => i.state === "sent" && i.sequence === sequence) ? data : undefined;
      }, 15_000, 100);
    expect((await invites(1)).map((i) => [i.email, i.channel])).toEqual([
      ["bo@example.com", "caldav"],
      ["cy@example.com", "caldav"],
    ]);
    const own = await radicale.client("ann");
    // Read with the data in the query's own answer: a multi-get of what a listing found would fail on an event deleted between.
    const onServer = async () => (await own.fetchCalendarObjects({ calendar: { url: calendars.work }, useMultiGet: false })).find((o) => o.url.endsWith(`${meetingId}.ics`));
    const first = new ICAL.Component(ICAL.parse((await onServer())!.data as string)).getFirstSubcomponent("vevent")!;
    expect(first.getFirstPropertyValue("uid")).toBe(`${meetingId}@sched.invalid`);
    expect(first.getAllProperties("attendee").map((p) => String(p.getFirstValue()).replace(/^mailto:/i, "")).sort()).toEqual(["bo@example.com", "cy@example.com"]);
    expect(String(first.getFirstPropertyValue("organizer")).replace(/^mailto:/i, "")).toBe(ann.email);

    // Bo answers; a scheduling server writes the answer into the organizer's copy, and the API reads it from there.
    const copy = (await onServer())!;
    const organizerCopy = new ICAL.Component(ICAL.parse(copy.data as string));
    const bo = organizerCopy.getFirstSubcomponent("vevent")!.getAllProperties("attendee").find((p) => /bo@example\.com$/i.test(String(p.getFirstValue())))!;
    bo.setParameter("partstat", "ACCEPTED");
    const answered = organizerCopy.toString();
    expect((await own.updateCalendarObject({ calendarObject: { url: copy.url, data: answered } })).ok).toBe(true);
    const seen = await eventually(async () => {
      const res = await call(suite.url, "GET", `/v1/meetings/${meetingId}`, { key: ann.key });
      return res.body.attendees[0].response === "accepted" ? res.body.attendees : undefined;
    }, 10_000, 100);
    expect(seen[1]).toEqual({ email: "cy@example.com", response: "needsAction", respondedAt: null });

    // An update replaces the same event, keeping the answers known.
    expect((await call(suite.url, "PATCH", `/v1/meetings/${meetingId}`, { key: ann.key, body: { title: "Kickoff v2" } })).status).toBe(200);
    await invites(2);
    const second = new ICAL.Component(ICAL.parse((await onServer())!.data as string)).getFirstSubcomponent("vevent")!;
    expect([second.getFirstPropertyValue("summary"), second.getFirstPropertyValue("sequence")]).toEqual(["Kickoff v2", 2]);
    const partstats = Object.fromEntries(second.getAllProperties("attendee").map((p) => [String(p.getFirstValue()).replace(/^mailto:/i, ""), p.getParameter("partstat")]));
    expect(partstats).toEqual({ "bo@example.com": "ACCEPTED", "cy@example.com": "NEEDS-ACTION" });

    // Cancelling removes it, so the server sends the cancellations.
    expect((await call(suite.url, "PATCH", `/v1/meetings/${meetingId}`, { key: ann.key, body: { status: "cancelled" } })).status).toBe(200);
    await invites(3);
    expect(await onServer()).toBeUndefined();
  });

  it.runIf(available)("counts each occurrence of a recurring event in a chosen calendar as busy, at its local time across summer time, without the left-out one and with the moved one at its new time", async () => {
    const rea = await createUserWithKey(suite.url, { mode: "live", timezone: "Europe/Berlin" });
    const own = await radicale.client("rea");
    const standups = `${radicale.url}rea/standups/`;
    await own.makeCalendar({ url: standups, props: { displayname: "standups" } });
    expect((await own.createCalendarObject({ calendar: { url: standups }, iCalString: STANDUP, filename: "standup.ics" })).status).toBe(201);
    const connected = await call(suite.url, "POST", "/v1/calendar-connections/caldav", { key: rea.key, body: { serverUrl: radicale.url, username: "rea", password: PASSWORD } });
    expect(connected.status).toBe(201);
    const chosen = await call(suite.url, "PATCH", `/v1/calendar-connections/${connected.body.id}`, { key: rea.key, body: { busyCalendars: [standups] } });
    expect(chosen.body.busyCalendars).toEqual([standups]);

    // A loaded machine may let the server miss the deadline: the answer then says so, and is asked again.
    const range = { participants: [rea.email], from: "2031-03-17", to: "2031-04-10" };
    const answer = await eventually(async () => {
      const res = await call(suite.url, "POST", "/v1/availability/free-busy", { key: rea.key, body: range });
      expect(res.status).toBe(200);
      return res.body.people[0].busyComplete === true ? res.body.people[0] : undefined;
    }, 20_000, 200);
    expect(answer.busy).toEqual([
      { start: "2031-03-20T08:00:00Z", end: "2031-03-20T09:00:00Z" },
      { start: "2031-04-04T12:00:00Z", end: "2031-04-04T13:30:00Z" },
      { start: "2031-04-10T07:00:00Z", end: "2031-04-10T08:00:00Z" },
    ]);

    const thursday = await eventually(async () => {
      const res = await call(suite.url, "GET", "/v1/availability?date=2031-04-10", { key: rea.key });
      return res.status === 200 && res.body.busyComplete === undefined ? res.body : undefined;
    }, 20_000, 200);
    expect(thursday.slots).toEqual([
      { start: "09:00", end: "10:00", status: "busy" },
      { start: "10:00", end: "17:00", status: "free" },
    ]);
  });

  it.runIf(available)("marks the connection broken when the server refuses the password it was connected with, and sends the invites by e-mail instead", async () => {
    const max = await createUserWithKey(suite.url, { mode: "live", timezone: "UTC" });
    await (await radicale.client("max")).makeCalendar({ url: `${radicale.url}max/work/`, props: { displayname: "work" } });
    const connected = await call(suite.url, "POST", "/v1/calendar-connections/caldav", { key: max.key, body: { serverUrl: radicale.url, username: "max", password: PASSWORD } });
    expect(connected.status).toBe(201);
    const id = connected.body.id as string;
    expect((await call(suite.url, "PATCH", `/v1/calendar-connections/${id}`, { key: max.key, body: { default: true } })).body.default).toBe(true);

    // The user revokes the app password at their provider.
    await radicale.changePassword("max", "app-password-2");
    const meeting = await call(suite.url, "POST", "/v1/meetings", { key: max.key, body: { title: "Fallback", duration: "30 mins", startTime: `${DAY}T16:00:00Z`, participants: ["fb-caldav@example.com"] } });
    expect(meeting.status).toBe(201);
    const invites = await eventually(async () => {
      const res = await call(suite.url, "GET", `/v1/meetings/${meeting.body.id as string}/invites`, { key: max.key });
      const data = res.body.data as { email: string; state: string; channel: string }[];
      return data.length > 0 && data.every((i) => i.state !== "pending") ? data : undefined;
    }, 15_000, 100);
    expect(invites).toEqual([expect.objectContaining({ email: "fb-caldav@example.com", state: "sent", channel: "email" })]);
    expect(world.smtp.to("fb-caldav@example.com")).toHaveLength(1);
    const listed = await call(suite.url, "GET", "/v1/calendar-connections", { key: max.key });
    expect(listed.body.data).toEqual([expect.objectContaining({ id, provider: "caldav", status: "broken" })]);
    // Nothing was put in the calendar with the old password.
    expect(await (await radicale.client("max")).fetchCalendarObjects({ calendar: { url: `${radicale.url}max/work/` } })).toEqual([]);
  });
});
