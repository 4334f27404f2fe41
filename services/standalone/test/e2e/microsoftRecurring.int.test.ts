import { eventually, uniqueSuffix } from "@sched/testing";
import type { GraphEvent } from "@sched/testing/microsoft";
import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, call, createUserWithKey, WIRINGS } from "../harness.js";
import { microsoftWorldPerSuite } from "../invitesSetup.js";

type Invite = { email: string; kind: string; sequence: number; state: string; channel: string };

/** The weeks the series below spans (March to April 2031), with room either side. */
const SPAN = { from: Date.parse("2031-03-01T00:00:00Z"), to: Date.parse("2031-05-01T00:00:00Z") };

describe.each(WIRINGS)("recurring meetings on Microsoft calendars (%s)", async (wiring) => {
  const suite = await microsoftWorldPerSuite(wiring);
  const { available, microsoft } = suite;

  /** An organizer in Berlin whose Microsoft calendar carries their invites. */
  const organizer = async () => {
    const org = await createUserWithKey(suite.world.url, { mode: "live", timezone: "Europe/Berlin" });
    const grant = microsoft.grant(`org-${uniqueSuffix()}@contoso.example`);
    const attached = await call(suite.world.url, "POST", `/admin/v1/users/${org.userId}/calendar-connections`, {
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
      body: { provider: "microsoft", accountEmail: grant.accountEmail, accessToken: grant.accessToken, refreshToken: grant.refreshToken },
    });
    expect(attached.status).toBe(201);
    return { ...org, account: grant.accountEmail };
  };

  const invitesOf = async (key: string, meetingId: string): Promise<Invite[]> => {
    const res = await call(suite.world.url, "GET", `/v1/meetings/${meetingId}/invites`, { key });
    expect(res.status).toBe(200);
    return res.body.data as Invite[];
  };
  /** Waits until a delivery of this kind to every participant of the meeting is sent, and answers them. */
  const sent = (key: string, meetingId: string, kind: "request" | "cancel", count: number) =>
    eventually(async () => {
      const data = await invitesOf(key, meetingId);
      return data.length === count && data.every((i) => i.state === "sent" && i.kind === kind) ? data : undefined;
    }, 30_000, 100);

  /** A weekly series on Mondays at 09:00 Berlin across the change to summer time (30 March 2031). */
  const createSeries = async (key: string, title: string, participants: string[], recurrence = "FREQ=WEEKLY;BYDAY=MO;COUNT=4", startTime = "2031-03-17T09:00") => {
    const created = await call(suite.world.url, "POST", "/v1/meetings", { key, body: { title, duration: "30 mins", startTime, participants, recurrence } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    return { id, occurrence: (utc: string) => `${id}_${utc}` };
  };

  /** The one event of the organizer's mailbox with this subject (removed or not). */
  const eventOf = (account: string, subject: string): GraphEvent => {
    const found = [...microsoft.events.values()].filter((e) => e.owner === account && e.subject === subject);
    expect(found).toHaveLength(1);
    return found[0]!;
  };
  const callsOn = (eventId: string) => microsoft.graphCalls().filter((c) => decodeURIComponent(c.path).includes(eventId));

  it.runIf(available)("puts one recurring Graph event with the pattern, patches and cancels single occurrences as instances, and cancels the series", async () => {
    const org = await organizer();
    const guests = [`ann-${uniqueSuffix()}@example.com`, `bob-${uniqueSuffix()}@example.com`].sort();
    const title = `Weekly sync ${uniqueSuffix()}`;
    const series = await createSeries(org.key, title, guests);

    expect((await sent(org.key, series.id, "request", 2)).map((i) => [i.email, i.channel, i.sequence])).toEqual(guests.map((g) => [g, "microsoft", 1]));
    const event = eventOf(org.account, title);
    expect(event.type).toBe("seriesMaster");
    expect(event.transactionId).toMatch(/^sched-[0-9a-f]{40}$/);
    expect(event.start).toEqual({ dateTime: "2031-03-17T09:00:00", timeZone: "Europe/Berlin" });
    expect(event.end).toEqual({ dateTime: "2031-03-17T09:30:00", timeZone: "Europe/Berlin" });
    expect(event.recurrence).toEqual({
      pattern: { type: "weekly", interval: 1, daysOfWeek: ["monday"], firstDayOfWeek: "monday" },
      range: { type: "numbered", startDate: "2031-03-17", numberOfOccurrences: 4, recurrenceTimeZone: "Europe/Berlin" },
    });
    expect(event.attendees.map((a) => a.emailAddress.address)).toEqual(guests);
    // Graph expands it at 09:00 Berlin on each Monday, before and after the clocks change.
    expect(microsoft.instancesOf(event, SPAN.from, SPAN.to).map((i) => i.originalStart)).toEqual(["2031-03-17T08:00:00Z", "2031-03-24T08:00:00Z", "2031-03-31T07:00:00Z", "2031-04-07T07:00:00Z"]);
    expect(microsoft.graphCalls().filter((c) => c.method === "POST" && c.path === "/v1.0/me/events")).toHaveLength(1);

    // One occurrence moved to Tuesday 10:00 Berlin and renamed: that instance alone changes.
    const movedId = series.occurrence("20310324T080000Z");
    expect((await call(suite.world.url, "PATCH", `/v1/meetings/${movedId}`, { key: org.key, body: { startTime: "2031-03-25T10:00", title: "Moved sync" } })).status).toBe(200);
    expect((await sent(org.key, movedId, "request", 2)).map((i) => i.channel)).toEqual(["microsoft", "microsoft"]);
    const afterMove = microsoft.instancesOf(event, SPAN.from, SPAN.to);
    expect(afterMove.map((i) => [i.originalStart, i.type, i.subject, i.start.dateTime])).toEqual([
      ["2031-03-17T08:00:00Z", "occurrence", title, "2031-03-17T08:00:00.0000000"],
      ["2031-03-24T08:00:00Z", "exception", "Moved sync", "2031-03-25T09:00:00.0000000"],
      ["2031-03-31T07:00:00Z", "occurrence", title, "2031-03-31T07:00:00.0000000"],
      ["2031-04-07T07:00:00Z", "occurrence", title, "2031-04-07T07:00:00.0000000"],
    ]);
    const movedInstance = afterMove[1]!;
    expect(callsOn(event.id).filter((c) => c.method === "PATCH").map((c) => decodeURIComponent(c.path))).toEqual([`/v1.0/me/events/${movedInstance.id}`]);
    expect(event.subject).toBe(title);

    // One occurrence removed: that instance is cancelled (Graph has no EXDATE), the series stays.
    const cancelledId = series.occurrence("20310331T070000Z");
    expect((await call(suite.world.url, "DELETE", `/v1/meetings/${cancelledId}`, { key: org.key })).status).toBe(204);
    expect((await sent(org.key, cancelledId, "cancel", 2)).map((i) => i.channel)).toEqual(["microsoft", "microsoft"]);
    const withCancelled = microsoft.instancesOf(event, SPAN.from, SPAN.to, { withCancelled: true });
    expect(withCancelled.map((i) => [i.originalStart, i.isCancelled])).toEqual([
      ["2031-03-17T08:00:00Z", false],
      ["2031-03-24T08:00:00Z", false],
      ["2031-03-31T07:00:00Z", true],
      ["2031-04-07T07:00:00Z", false],
    ]);
    const cancels = callsOn(event.id).filter((c) => c.path.endsWith("/cancel"));
    expect(cancels.map((c) => decodeURIComponent(c.path))).toEqual([`/v1.0/me/events/${withCancelled[2]!.id}/cancel`]);
    expect(event.removed).toBe(false);

    // The organizer's busy time (getSchedule) holds the occurrences as they are now: the moved one at its new time, the cancelled one not at all.
    const schedule = await fetch(`${microsoft.url}/v1.0/me/calendar/getSchedule`, {
      method: "POST",
      headers: { Authorization: `Bearer ${microsoft.grant(org.account).accessToken}`, "content-type": "application/json", Prefer: 'outlook.timezone="UTC"' },
      body: JSON.stringify({ schedules: [org.account], startTime: { dateTime: "2031-03-16T00:00:00", timeZone: "UTC" }, endTime: { dateTime: "2031-04-10T00:00:00", timeZone: "UTC" } }),
    });
    const items = ((await schedule.json()) as { value: Array<{ scheduleItems: Array<{ start: { dateTime: string } }> }> }).value[0]!.scheduleItems;
    expect(items.map((i) => i.start.dateTime)).toEqual(["2031-03-17T08:00:00.0000000", "2031-03-25T09:00:00.0000000", "2031-04-07T07:00:00.0000000"]);

    // The series renamed: the recurring event is patched with its pattern, which drops its exceptions as Exchange
    // does; the changed occurrence is patched back and the cancelled one cancelled again.
    const renamed = `${title} renamed`;
    expect((await call(suite.world.url, "PATCH", `/v1/meetings/${series.id}`, { key: org.key, body: { title: renamed } })).status).toBe(200);
    await eventually(() => (event.subject === renamed ? true : undefined), 30_000, 100);
    // The series' invites settle once the changed occurrence is put back.
    await eventually(async () => ((await invitesOf(org.key, series.id)).every((i) => i.state === "sent" && i.sequence > 1) ? true : undefined), 30_000, 100);
    const seriesPatches = callsOn(event.id).filter((c) => c.method === "PATCH" && decodeURIComponent(c.path) === `/v1.0/me/events/${event.id}`);
    expect(seriesPatches).toHaveLength(1);
    expect(seriesPatches[0]!.body).toMatchObject({ subject: renamed, recurrence: event.recurrence, start: { dateTime: "2031-03-17T09:00:00", timeZone: "Europe/Berlin" } });
    expect(microsoft.instancesOf(event, SPAN.from, SPAN.to, { withCancelled: true }).map((i) => [i.originalStart, i.subject, i.isCancelled])).toEqual([
      ["2031-03-17T08:00:00Z", renamed, false],
      ["2031-03-24T08:00:00Z", "Moved sync", false],
      ["2031-03-31T07:00:00Z", renamed, true],
      ["2031-04-07T07:00:00Z", renamed, false],
    ]);
    expect(callsOn(event.id).filter((c) => c.method === "PATCH" && decodeURIComponent(c.path) === `/v1.0/me/events/${movedInstance.id}`)).toHaveLength(2);
    expect(microsoft.instancesOf(event, SPAN.from, SPAN.to)[1]!.start.dateTime).toBe("2031-03-25T09:00:00.0000000");

    // The series cancelled: the recurring event is cancelled, once.
    expect((await call(suite.world.url, "PATCH", `/v1/meetings/${series.id}`, { key: org.key, body: { status: "cancelled" } })).status).toBe(200);
    expect((await sent(org.key, series.id, "cancel", 2)).map((i) => i.channel)).toEqual(["microsoft", "microsoft"]);
    expect(event).toMatchObject({ isCancelled: true, removed: true });
    expect(callsOn(event.id).filter((c) => c.path.endsWith("/cancel")).map((c) => decodeURIComponent(c.path))).toEqual([
      `/v1.0/me/events/${withCancelled[2]!.id}/cancel`,
      `/v1.0/me/events/${withCancelled[2]!.id}/cancel`,
      `/v1.0/me/events/${event.id}/cancel`,
    ]);
    expect(microsoft.graphCalls().filter((c) => c.method === "POST" && c.path === "/v1.0/me/events")).toHaveLength(1);
    // Exchange told the attendees: nothing went by e-mail.
    for (const guest of guests) expect(suite.world.smtp.to(guest)).toEqual([]);
  });

  it.runIf(available)("carries a series whose rule Graph cannot say by e-mail, with its occurrences, and puts nothing on the calendar", async () => {
    const org = await organizer();
    const guest = `cy-${uniqueSuffix()}@example.com`;
    const title = `Twice monthly ${uniqueSuffix()}`;
    // The 1st and the 15th of each month: Graph's monthly pattern has one day of the month.
    const series = await createSeries(org.key, title, [guest], "FREQ=MONTHLY;BYMONTHDAY=1,15;COUNT=4", "2031-04-01T09:00");
    expect((await sent(org.key, series.id, "request", 1)).map((i) => [i.email, i.channel])).toEqual([[guest, "email"]]);
    const [invitation] = await eventually(() => (suite.world.smtp.to(guest).length >= 1 ? suite.world.smtp.to(guest) : undefined), 20_000, 100);
    expect(invitation!.ics).toMatch(/RRULE:FREQ=MONTHLY;\S*BYMONTHDAY=1,15/);

    // Its second occurrence (15 April, 09:00 Berlin) cancelled on its own: by e-mail too, after the series.
    const occurrenceId = series.occurrence("20310415T070000Z");
    expect((await call(suite.world.url, "PATCH", `/v1/meetings/${occurrenceId}`, { key: org.key, body: { status: "cancelled" } })).status).toBe(200);
    expect((await sent(org.key, occurrenceId, "cancel", 1)).map((i) => i.channel)).toEqual(["email"]);
    await eventually(() => (suite.world.smtp.to(guest).length >= 2 ? true : undefined), 20_000, 100);
    expect([...microsoft.events.values()].filter((e) => e.owner === org.account)).toEqual([]);
  });
});
