import { eventually, uniqueSuffix } from "@sched/testing";
import ICAL from "ical.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createUserWithKey, wiringAvailable, WIRINGS } from "../harness.js";
import { attachGoogle, startInvitesWorld, type InvitesWorld } from "../invitesSetup.js";
import { Radicale, radicaleInstalled } from "@sched/testing/radicale";

type Invite = { email: string; kind: string; sequence: number; state: string; channel: string };

/** The invite's calendar as a client reads it: its VTIMEZONEs registered, its VEVENTs as ical.js events. */
function read(ics: string) {
  const calendar = new ICAL.Component(ICAL.parse(ics));
  for (const vtimezone of calendar.getAllSubcomponents("vtimezone")) ICAL.TimezoneService.register(vtimezone);
  const events = calendar.getAllSubcomponents("vevent").map((v) => new ICAL.Event(v));
  return { method: calendar.getFirstPropertyValue("method"), events };
}

/** The wall-clock starts in Berlin a client expands from a series' event. */
function berlinStarts(event: ICAL.Event): string[] {
  const iterator = event.iterator();
  const starts: string[] = [];
  for (let next = iterator.next(); next && starts.length < 50; next = iterator.next()) {
    starts.push(new Intl.DateTimeFormat("sv-SE", { timeZone: "Europe/Berlin", dateStyle: "short", timeStyle: "short" }).format(next.toJSDate()));
  }
  return starts;
}

const PASSWORD = "app-password-1";

describe.each(WIRINGS)("invites of recurring meetings (%s)", async (wiring) => {
  const available = await wiringAvailable(wiring);
  let world: InvitesWorld;
  let radicale: Radicale | undefined;

  beforeAll(async () => {
    if (!available) return;
    if (radicaleInstalled()) {
      radicale = new Radicale({ rec: PASSWORD });
      await radicale.start();
    }
    world = await startInvitesWorld(wiring, { CALDAV_ANSWERS_POLL_MS: "300" });
  });
  afterAll(async () => {
    await world?.stop();
    await radicale?.stop();
  });

  const invitesOf = async (key: string, meetingId: string): Promise<Invite[]> => {
    const res = await call(world.url, "GET", `/v1/meetings/${meetingId}/invites`, { key });
    expect(res.status).toBe(200);
    return res.body.data as Invite[];
  };
  /** Waits until the meeting's invites are all settled at `sequence` (or earlier for those not owed anything new), `count` of them. */
  const settledAt = (key: string, meetingId: string, sequence: number, count: number) =>
    eventually(async () => {
      const data = await invitesOf(key, meetingId);
      return data.length === count && data.every((i) => i.state === "sent") && data.some((i) => i.sequence === sequence) ? data : undefined;
    }, 20_000, 100);

  /** A weekly series at 09:00 Berlin across the change to summer time (30 March 2031), and its occurrence ids. */
  const createSeries = async (key: string, participants: string[]) => {
    const created = await call(world.url, "POST", "/v1/meetings", {
      key,
      body: { title: "Weekly sync", duration: "30 mins", startTime: "2031-03-17T09:00", participants, recurrence: "FREQ=WEEKLY;BYDAY=MO;COUNT=4" },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ startTime: "2031-03-17T08:00:00Z", recurrence: "FREQ=WEEKLY;COUNT=4;BYDAY=MO" });
    const id = created.body.id as string;
    return { id, occurrence: (utc: string) => `${id}_${utc}`, sequence: created.body.sequence as number | undefined };
  };

  it.runIf(available)("e-mails one invite with the rule per participant, one update for a changed occurrence, one cancellation for a cancelled one, one for the series", async () => {
    const org = await createUserWithKey(world.url, { mode: "live", timezone: "Europe/Berlin" });
    const guests = [`ann-${uniqueSuffix()}@example.com`, `bob-${uniqueSuffix()}@example.com`];
    const series = await createSeries(org.key, guests);
    const uid = `${series.id}@sched.invalid`;
    const mailsOf = (who: string, count: number) => eventually(() => (world.smtp.to(who).length >= count ? world.smtp.to(who) : undefined), 20_000, 100);

    // One invitation each, one recurring event: 09:00 Berlin every week, before and after the clocks change.
    expect((await settledAt(org.key, series.id, 1, 2)).map((i) => [i.email, i.kind, i.channel, i.sequence])).toEqual(guests.sort().map((g) => [g, "request", "email", 1]));
    for (const guest of guests) {
      const [mail] = await mailsOf(guest, 1);
      const { method, events } = read(mail!.ics!);
      expect(method).toBe("REQUEST");
      expect(events).toHaveLength(1);
      expect(events[0]!.uid).toBe(uid);
      expect(String(events[0]!.component.getFirstPropertyValue("rrule"))).toBe("FREQ=WEEKLY;COUNT=4;BYDAY=MO");
      expect(events[0]!.component.getFirstProperty("dtstart")!.getParameter("tzid")).toBe("Europe/Berlin");
      expect(berlinStarts(events[0]!)).toEqual(["2031-03-17 09:00", "2031-03-24 09:00", "2031-03-31 09:00", "2031-04-07 09:00"]);
    }

    // An exception: the 24 March occurrence moves to Tuesday 10:00 Berlin; an update of that occurrence only.
    const moved = await call(world.url, "PATCH", `/v1/meetings/${series.occurrence("20310324T080000Z")}`, { key: org.key, body: { startTime: "2031-03-25T10:00", title: "Moved sync" } });
    expect(moved.status).toBe(200);
    const movedInvites = await eventually(async () => {
      const data = await invitesOf(org.key, series.occurrence("20310324T080000Z"));
      return data.length === 2 && data.every((i) => i.state === "sent") ? data : undefined;
    }, 20_000, 100);
    const exceptionSequence = movedInvites[0]!.sequence;
    expect(exceptionSequence).toBeGreaterThan(1);
    expect(movedInvites.map((i) => [i.email, i.kind, i.sequence])).toEqual(guests.map((g) => [g, "request", exceptionSequence]));
    for (const guest of guests) {
      const mails = await mailsOf(guest, 2);
      const { method, events } = read(mails[1]!.ics!);
      expect(method).toBe("REQUEST");
      expect(events).toHaveLength(1);
      expect([events[0]!.uid, events[0]!.isRecurrenceException(), events[0]!.isRecurring(), events[0]!.sequence, events[0]!.summary]).toEqual([uid, true, false, exceptionSequence, "Moved sync"]);
      expect(events[0]!.recurrenceId.toJSDate().toISOString()).toBe("2031-03-24T08:00:00.000Z");
      expect(events[0]!.startDate.toJSDate().toISOString()).toBe("2031-03-25T09:00:00.000Z");
    }

    // One occurrence cancelled: a CANCEL of that occurrence.
    expect((await call(world.url, "PATCH", `/v1/meetings/${series.occurrence("20310331T070000Z")}`, { key: org.key, body: { status: "cancelled" } })).status).toBe(200);
    for (const guest of guests) {
      const mails = await mailsOf(guest, 3);
      const { method, events } = read(mails[2]!.ics!);
      expect(method).toBe("CANCEL");
      expect(events).toHaveLength(1);
      expect(events[0]!.uid).toBe(uid);
      expect(events[0]!.recurrenceId.toJSDate().toISOString()).toBe("2031-03-31T07:00:00.000Z");
      expect(events[0]!.sequence).toBeGreaterThan(exceptionSequence);
    }

    // The series cancelled: one CANCEL of the whole UID.
    expect((await call(world.url, "PATCH", `/v1/meetings/${series.id}`, { key: org.key, body: { status: "cancelled" } })).status).toBe(200);
    for (const guest of guests) {
      const mails = await mailsOf(guest, 4);
      const { method, events } = read(mails[3]!.ics!);
      expect(method).toBe("CANCEL");
      expect(events).toHaveLength(1);
      expect(events[0]!.uid).toBe(uid);
      expect(events[0]!.component.getFirstPropertyValue("recurrence-id")).toBeNull();
      expect(events[0]!.component.getFirstPropertyValue("status")).toBe("CANCELLED");
    }
    // Each invite once: nothing more arrives.
    await new Promise((r) => setTimeout(r, 500));
    for (const guest of guests) expect(world.smtp.to(guest)).toHaveLength(4);
    expect((await invitesOf(org.key, series.id)).map((i) => [i.email, i.kind, i.state])).toEqual(guests.map((g) => [g, "cancel", "sent"]));
  });

  it.runIf(available)("a series e-mailed again carries its moved occurrence; someone added to one occurrence only gets a CANCEL of it when the series goes", async () => {
    const org = await createUserWithKey(world.url, { mode: "live", timezone: "Europe/Berlin" });
    const guest = `eve-${uniqueSuffix()}@example.com`;
    const extra = `fay-${uniqueSuffix()}@example.com`;
    const series = await createSeries(org.key, [guest]);
    const uid = `${series.id}@sched.invalid`;
    const mailsOf = (who: string, count: number) => eventually(() => (world.smtp.to(who).length >= count ? world.smtp.to(who) : undefined), 20_000, 100);
    await settledAt(org.key, series.id, 1, 1);

    // 24 March moves to Tuesday 10:00 Berlin, with Fay added to it alone.
    const movedId = series.occurrence("20310324T080000Z");
    expect((await call(world.url, "PATCH", `/v1/meetings/${movedId}`, { key: org.key, body: { startTime: "2031-03-25T10:00", participants: [guest, extra] } })).status).toBe(200);
    const [fayInvite] = await mailsOf(extra, 1);
    const fayInvited = read(fayInvite!.ics!);
    expect([fayInvited.method, fayInvited.events.length, fayInvited.events[0]!.recurrenceId.toJSDate().toISOString()]).toEqual(["REQUEST", 1, "2031-03-24T08:00:00.000Z"]);

    // The series renamed: Eve's update is the series and, beside it, the moved occurrence where it went.
    expect((await call(world.url, "PATCH", `/v1/meetings/${series.id}`, { key: org.key, body: { title: "Weekly sync, renamed" } })).status).toBe(200);
    const renamed = read((await mailsOf(guest, 3))[2]!.ics!);
    expect(renamed.method).toBe("REQUEST");
    expect(renamed.events.map((e) => [e.uid, e.isRecurrenceException() ? e.recurrenceId.toJSDate().toISOString() : null])).toEqual([
      [uid, null],
      [uid, "2031-03-24T08:00:00.000Z"],
    ]);
    const [master, moved] = renamed.events as [ICAL.Event, ICAL.Event];
    expect(master.summary).toBe("Weekly sync, renamed");
    expect(moved.startDate.toJSDate().toISOString()).toBe("2031-03-25T09:00:00.000Z");
    expect(moved.attendees.map((a) => String(a.getFirstValue()).toLowerCase().replace(/^mailto:/, ""))).toEqual([guest, extra]);
    master.relateException(moved);
    const seen: string[] = [];
    const iterator = master.iterator();
    for (let next = iterator.next(); next; next = iterator.next()) seen.push(master.getOccurrenceDetails(next).startDate.toJSDate().toISOString());
    expect(seen).toEqual(["2031-03-17T08:00:00.000Z", "2031-03-25T09:00:00.000Z", "2031-03-31T07:00:00.000Z", "2031-04-07T07:00:00.000Z"]);

    // The series cancelled: Eve a CANCEL of the UID, Fay a CANCEL of her occurrence.
    expect((await call(world.url, "PATCH", `/v1/meetings/${series.id}`, { key: org.key, body: { status: "cancelled" } })).status).toBe(200);
    const fayCancel = read((await mailsOf(extra, 2))[1]!.ics!);
    expect(fayCancel.method).toBe("CANCEL");
    expect(fayCancel.events.map((e) => [e.uid, e.recurrenceId.toJSDate().toISOString()])).toEqual([[uid, "2031-03-24T08:00:00.000Z"]]);
    const eveCancel = read((await mailsOf(guest, 4))[3]!.ics!);
    expect([eveCancel.method, eveCancel.events[0]!.component.getFirstPropertyValue("recurrence-id")]).toEqual(["CANCEL", null]);
    const invites = await eventually(async () => {
      const data = await invitesOf(org.key, series.id);
      return data.length === 2 && data.every((i) => i.state === "sent" && i.kind === "cancel") ? data : undefined;
    }, 20_000, 100);
    expect(invites.map((i) => i.email)).toEqual([guest, extra].sort());
  });

  it.runIf(available)("a new rule for the series drops an occurrence changed on its own: the one added to it alone gets a CANCEL of it", async () => {
    const org = await createUserWithKey(world.url, { mode: "live", timezone: "Europe/Berlin" });
    const guest = `gil-${uniqueSuffix()}@example.com`;
    const extra = `hal-${uniqueSuffix()}@example.com`;
    const series = await createSeries(org.key, [guest]);
    const mailsOf = (who: string, count: number) => eventually(() => (world.smtp.to(who).length >= count ? world.smtp.to(who) : undefined), 20_000, 100);
    await settledAt(org.key, series.id, 1, 1);
    expect((await call(world.url, "PATCH", `/v1/meetings/${series.occurrence("20310331T070000Z")}`, { key: org.key, body: { participants: [guest, extra] } })).status).toBe(200);
    await mailsOf(extra, 1);

    // Tuesdays from now on: Monday 31 March is no day of the new rule, so its changed occurrence goes.
    const moved = await call(world.url, "PATCH", `/v1/meetings/${series.id}`, { key: org.key, body: { startTime: "2031-03-18T09:00", recurrence: "FREQ=WEEKLY;BYDAY=TU;COUNT=4" } });
    expect(moved.status).toBe(200);
    const halCancel = read((await mailsOf(extra, 2))[1]!.ics!);
    expect(halCancel.method).toBe("CANCEL");
    expect(halCancel.events.map((e) => e.recurrenceId.toJSDate().toISOString())).toEqual(["2031-03-31T07:00:00.000Z"]);
    // Gil's update is the series on its new days, without the dropped occurrence.
    const gilUpdate = read((await mailsOf(guest, 3))[2]!.ics!);
    expect(gilUpdate.events).toHaveLength(1);
    expect(berlinStarts(gilUpdate.events[0]!)).toEqual(["2031-03-18 09:00", "2031-03-25 09:00", "2031-04-01 09:00", "2031-04-08 09:00"]);
  });

  it.runIf(available)("a new time of day keeps an occurrence changed on its own: the one added to it alone follows it to its new RECURRENCE-ID, the one left out keeps it out", async () => {
    const org = await createUserWithKey(world.url, { mode: "live", timezone: "Europe/Berlin" });
    const guest = `ida-${uniqueSuffix()}@example.com`;
    const leftOut = `jon-${uniqueSuffix()}@example.com`;
    const extra = `kim-${uniqueSuffix()}@example.com`;
    const series = await createSeries(org.key, [guest, leftOut]);
    const uid = `${series.id}@sched.invalid`;
    const mailsOf = (who: string, count: number) => eventually(() => (world.smtp.to(who).length >= count ? world.smtp.to(who) : undefined), 20_000, 100);
    await settledAt(org.key, series.id, 1, 2);
    // 31 March: Kim instead of Jon.
    expect((await call(world.url, "PATCH", `/v1/meetings/${series.occurrence("20310331T070000Z")}`, { key: org.key, body: { participants: [guest, extra] } })).status).toBe(200);
    await mailsOf(extra, 1);
    expect(read((await mailsOf(leftOut, 2))[1]!.ics!).method).toBe("CANCEL");

    // Every occurrence at 10:30 Berlin: 31 March's stays changed, at 10:30, its RECURRENCE-ID with it.
    expect((await call(world.url, "PATCH", `/v1/meetings/${series.id}`, { key: org.key, body: { startTime: "2031-03-17T10:30" } })).status).toBe(200);
    const kim = read((await mailsOf(extra, 2))[1]!.ics!);
    expect(kim.method).toBe("REQUEST");
    expect(kim.events.map((e) => [e.uid, e.isRecurring(), e.recurrenceId.toJSDate().toISOString(), e.component.getFirstPropertyValue("status")])).toEqual([
      [uid, false, "2031-03-31T08:30:00.000Z", "CONFIRMED"],
      [uid, false, "2031-03-31T07:00:00.000Z", "CANCELLED"],
    ]);
    expect(kim.events[0]!.startDate.toJSDate().toISOString()).toBe("2031-03-31T08:30:00.000Z");
    // Ida has the series with the occurrence; Jon the series without it.
    const ida = read((await mailsOf(guest, 3))[2]!.ics!);
    expect(ida.events.map((e) => (e.isRecurrenceException() ? e.recurrenceId.toJSDate().toISOString() : null))).toEqual([null, "2031-03-31T08:30:00.000Z"]);
    const jon = read((await mailsOf(leftOut, 3))[2]!.ics!);
    expect(jon.events).toHaveLength(1);
    expect(berlinStarts(jon.events[0]!)).toEqual(["2031-03-17 10:30", "2031-03-24 10:30", "2031-04-07 10:30"]);
  });

  it.runIf(available)("puts one recurring event on Google, changes and cancels one occurrence through its instance, and deletes the event for the series", async () => {
    const org = await createUserWithKey(world.url, { mode: "live", timezone: "Europe/Berlin" });
    await attachGoogle(world, org.userId, world.google.grant());
    const guest = `cy-${uniqueSuffix()}@example.com`;
    const series = await createSeries(org.key, [guest]);
    const eventId = Buffer.from(series.id).toString("hex");
    const callsOf = (predicate: (c: { method: string; path: string }) => boolean) => world.google.calendarCalls().filter((c) => c.path.includes(eventId) || (c.method === "POST" && c.body?.id === eventId)).filter(predicate);

    expect((await settledAt(org.key, series.id, 1, 1)).map((i) => [i.email, i.channel])).toEqual([[guest, "google"]]);
    const inserts = callsOf((c) => c.method === "POST");
    expect(inserts).toHaveLength(1);
    expect(inserts[0]!.query.sendUpdates).toBe("all");
    expect(inserts[0]!.body).toMatchObject({ recurrence: ["RRULE:FREQ=WEEKLY;COUNT=4;BYDAY=MO"], start: { dateTime: "2031-03-17T09:00:00+01:00", timeZone: "Europe/Berlin" } });
    // Google expands it at 09:00 Berlin on each Monday.
    expect(world.google.instanceStarts(world.google.events.get(eventId)!.body)).toEqual(["2031-03-17T08:00:00Z", "2031-03-24T08:00:00Z", "2031-03-31T07:00:00Z", "2031-04-07T07:00:00Z"]);

    const movedId = series.occurrence("20310324T080000Z");
    expect((await call(world.url, "PATCH", `/v1/meetings/${movedId}`, { key: org.key, body: { startTime: "2031-03-25T10:00" } })).status).toBe(200);
    await eventually(async () => ((await invitesOf(org.key, movedId)).some((i) => i.state === "sent") ? true : undefined), 20_000, 100);
    const instancePatches = callsOf((c) => c.method === "PATCH");
    expect(instancePatches.map((c) => c.path.split("/").pop())).toEqual([`${eventId}_20310324T080000Z`]);
    expect(instancePatches[0]!.body).toMatchObject({ start: { dateTime: "2031-03-25T10:00:00+01:00", timeZone: "Europe/Berlin" } });
    expect(instancePatches[0]!.body!.recurrence).toBeUndefined();

    // Removing one occurrence (DELETE of its id) cancels it like a PATCH would.
    const cancelledId = series.occurrence("20310331T070000Z");
    expect((await call(world.url, "DELETE", `/v1/meetings/${cancelledId}`, { key: org.key })).status).toBe(204);
    await eventually(async () => ((await invitesOf(org.key, cancelledId)).some((i) => i.state === "sent" && i.kind === "cancel") ? true : undefined), 20_000, 100);
    expect(callsOf((c) => c.method === "DELETE").map((c) => c.path.split("/").pop())).toEqual([`${eventId}_20310331T070000Z`]);
    expect(world.google.events.get(eventId)!.deleted).toBe(false);

    expect((await call(world.url, "PATCH", `/v1/meetings/${series.id}`, { key: org.key, body: { status: "cancelled" } })).status).toBe(200);
    await eventually(async () => ((await invitesOf(org.key, series.id)).some((i) => i.state === "sent" && i.kind === "cancel") ? true : undefined), 20_000, 100);
    expect(callsOf((c) => c.method === "DELETE").map((c) => c.path.split("/").pop())).toEqual([`${eventId}_20310331T070000Z`, eventId]);
    expect(callsOf((c) => c.method === "POST")).toHaveLength(1);
    expect(world.smtp.to(guest)).toEqual([]);
  });

  it.runIf(available)("on Google, a new time of the series puts each changed occurrence it keeps back on its instance at the new time, its added participant with it", async () => {
    const org = await createUserWithKey(world.url, { mode: "live", timezone: "Europe/Berlin" });
    await attachGoogle(world, org.userId, world.google.grant());
    const guest = `lea-${uniqueSuffix()}@example.com`;
    const extra = `max-${uniqueSuffix()}@example.com`;
    const series = await createSeries(org.key, [guest]);
    const eventId = Buffer.from(series.id).toString("hex");
    const patchesOf = (id: string) => world.google.calendarCalls().filter((c) => c.method === "PATCH" && c.path.endsWith(`/${id}`));
    await settledAt(org.key, series.id, 1, 1);
    const changedId = series.occurrence("20310331T070000Z");
    expect((await call(world.url, "PATCH", `/v1/meetings/${changedId}`, { key: org.key, body: { participants: [guest, extra], title: "With Max" } })).status).toBe(200);
    await eventually(async () => ((await invitesOf(org.key, changedId)).some((i) => i.state === "sent") ? true : undefined), 20_000, 100);

    const moved = await call(world.url, "PATCH", `/v1/meetings/${series.id}`, { key: org.key, body: { startTime: "2031-03-17T10:30" } });
    expect(moved.status).toBe(200);
    const restored = await eventually(() => (patchesOf(`${eventId}_20310331T083000Z`).length > 0 ? patchesOf(`${eventId}_20310331T083000Z`) : undefined), 20_000, 100);
    expect(restored[0]!.query.sendUpdates).toBe("all");
    expect(restored[0]!.body).toMatchObject({ summary: "With Max", start: { dateTime: "2031-03-31T10:30:00+02:00", timeZone: "Europe/Berlin" } });
    expect((restored[0]!.body!.attendees as Array<{ email: string }>).map((a) => a.email)).toEqual([guest, extra]);
    // The series' own patch came first, then the instance's.
    const calls = world.google.calendarCalls().filter((c) => c.method === "PATCH" && c.path.includes(eventId));
    expect(calls.map((c) => c.path.split("/").pop())).toEqual([`${eventId}_20310331T070000Z`, eventId, `${eventId}_20310331T083000Z`]);
  });

  it.runIf(available && radicaleInstalled())("keeps a series in the CalDAV calendar as one object: the master with its rule, a changed occurrence beside it, a cancelled one as EXDATE", async () => {
    const org = await createUserWithKey(world.url, { mode: "live", timezone: "Europe/Berlin" });
    const own = await radicale!.client("rec");
    const calendarUrl = `${radicale!.url}rec/work-${uniqueSuffix()}/`;
    await own.makeCalendar({ url: calendarUrl, props: { displayname: "work" } });
    const connected = await call(world.url, "POST", "/v1/calendar-connections/caldav", { key: org.key, body: { serverUrl: radicale!.url, username: "rec", password: PASSWORD } });
    expect(connected.status).toBe(201);
    const connectionId = connected.body.id as string;
    expect((await call(world.url, "PATCH", `/v1/calendar-connections/${connectionId}`, { key: org.key, body: { default: true, busyCalendars: [calendarUrl] } })).status).toBe(200);

    const guest = `dee-${uniqueSuffix()}@example.com`;
    const series = await createSeries(org.key, [guest]);
    expect((await settledAt(org.key, series.id, 1, 1)).map((i) => [i.email, i.channel])).toEqual([[guest, "caldav"]]);
    // Read with the data in the query's own answer: a multi-get of what a listing found would fail on an event deleted between.
    const objects = async () => (await own.fetchCalendarObjects({ calendar: { url: calendarUrl }, useMultiGet: false })).filter((o) => typeof o.data === "string" && o.data.includes(series.id));
    const stored = async () => {
      const found = await objects();
      expect(found).toHaveLength(1);
      expect(found[0]!.url.endsWith(`${series.id}.ics`)).toBe(true);
      return read(found[0]!.data as string).events;
    };
    const [master] = await stored();
    expect(master!.isRecurring()).toBe(true);
    expect(berlinStarts(master!)).toEqual(["2031-03-17 09:00", "2031-03-24 09:00", "2031-03-31 09:00", "2031-04-07 09:00"]);

    const movedId = series.occurrence("20310324T080000Z");
    expect((await call(world.url, "PATCH", `/v1/meetings/${movedId}`, { key: org.key, body: { startTime: "2031-03-25T10:00" } })).status).toBe(200);
    await eventually(async () => ((await invitesOf(org.key, movedId)).some((i) => i.state === "sent" && i.channel === "caldav") ? true : undefined), 20_000, 100);
    const withException = await stored();
    expect(withException.map((e) => [e.uid, e.recurrenceId?.toJSDate().toISOString() ?? null, e.startDate.toJSDate().toISOString()])).toEqual([
      [`${series.id}@sched.invalid`, null, "2031-03-17T08:00:00.000Z"],
      [`${series.id}@sched.invalid`, "2031-03-24T08:00:00.000Z", "2031-03-25T09:00:00.000Z"],
    ]);

    const cancelledId = series.occurrence("20310331T070000Z");
    expect((await call(world.url, "PATCH", `/v1/meetings/${cancelledId}`, { key: org.key, body: { status: "cancelled" } })).status).toBe(200);
    await eventually(async () => ((await invitesOf(org.key, cancelledId)).some((i) => i.state === "sent" && i.kind === "cancel") ? true : undefined), 20_000, 100);
    const afterCancel = await stored();
    expect(afterCancel).toHaveLength(2);
    const exdates = afterCancel[0]!.component.getAllProperties("exdate").flatMap((p) => p.getValues().map((t) => (t as ICAL.Time).toJSDate().toISOString()));
    expect(exdates).toEqual(["2031-03-31T07:00:00.000Z"]);

    expect((await call(world.url, "PATCH", `/v1/meetings/${series.id}`, { key: org.key, body: { status: "cancelled" } })).status).toBe(200);
    await eventually(async () => ((await objects()).length === 0 ? true : undefined), 20_000, 100);
    expect(world.smtp.to(guest)).toEqual([]);
  });
});
