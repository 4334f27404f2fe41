import type { EventMessageOf, Stoppable } from "@sched/bus";
import { call } from "./harness.js";
import { meetingEvents, meetingsBusy, meetingsDelete, type Meeting, type MeetingListItem } from "@sched/proto";
import { eventually } from "@sched/testing";
import fc from "fast-check";
import { DateTime } from "luxon";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, created, newCaller, startMeetings, type TestMeetings } from "./harness.js";


let h: TestMeetings;
let consumer: Stoppable;
const received: EventMessageOf<(typeof meetingEvents)[number]>[] = [];

beforeAll(async () => {
  h = await startMeetings();
  consumer = await h.bus.consume({ durable: "recurring-test", events: meetingEvents }, async (m) => void received.push(m));
});
afterAll(async () => {
  await consumer?.stop();
  await h?.close();
});

const berlin = (t: string) => DateTime.fromISO(t, { zone: "utc" }).setZone("Europe/Berlin").toFormat("yyyy-MM-dd HH:mm");
const eventsOf = (id: string) => received.filter((m) => m.payload.meeting.id === id || m.payload.meeting.seriesId === id).map((m) => ({ subject: m.subject, ...m.payload }));

async function walk(caller: ReturnType<typeof newCaller>, query: Record<string, unknown>, limit: number): Promise<MeetingListItem[]> {
  const api = client(h.bus);
  const items: MeetingListItem[] = [];
  let after: string | undefined;
  for (let pages = 0; pages < 500; pages++) {
    const page = await api.list(caller, { ...query, limit: String(limit), ...(after ? { startingAfter: after } : {}) });
    expect(page.status).toBe(200);
    const body = (page.body) as { data: MeetingListItem[]; hasMore: boolean };
    items.push(...body.data);
    if (!body.hasMore) return items;
    after = body.data[body.data.length - 1]!.id;
  }
  throw new Error("the list did not end");
}

describe("recurring meetings (meetings service)", () => {
  it("creates a series in the organizer's zone, lists its occurrences at 09:00 Berlin across the spring change, and refuses a bad rule naming recurrence", async () => {
    const ann = newCaller({ timezone: "Europe/Berlin" });
    const api = client(h.bus);
    const bad = await api.create(ann, { title: "W", duration: "30 mins", participants: ["b@example.com"], startTime: "2031-03-17T09:00", recurrence: "FREQ=WEEKLY" });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: "invalid_request", param: "recurrence" });

    const series = await created(h.bus, ann, { startTime: "2031-03-17T09:00", recurrence: "RRULE:freq=weekly;count=6", participants: ["bo@example.com"] });
    expect(series).toMatchObject({ recurrence: "FREQ=WEEKLY;COUNT=6", seriesId: null, originalStartTime: null, startTime: "2031-03-17T08:00:00Z" });
    const list = ((await api.list(ann, { filter: "all", from: "2031-03-01", to: "2031-06-01" })).body) as { data: MeetingListItem[] };
    const items = [...list.data].reverse();
    expect(items.map((i) => berlin(i.startTime))).toEqual(["2031-03-17 09:00", "2031-03-24 09:00", "2031-03-31 09:00", "2031-04-07 09:00", "2031-04-14 09:00", "2031-04-21 09:00"]);
    expect(items[2]).toMatchObject({ id: `${series.id}_20310331T070000Z`, seriesId: series.id, originalStartTime: "2031-03-31T07:00:00Z", recurrence: null });

    // The participant sees the same occurrences; someone else sees none of them.
    const bo = newCaller({ email: "bo@example.com", timezone: "America/New_York" });
    expect(((await api.list(bo, { filter: "all", from: "2031-03-01", to: "2031-06-01" })).body).data).toHaveLength(6);
    expect((await api.get(newCaller(), items[0]!.id)).status).toBe(404);
    expect((await api.get(bo, items[0]!.id)).body).toMatchObject({ id: items[0]!.id, seriesId: series.id, title: "Sync" });
    // An id the rule does not give is no occurrence.
    expect((await api.get(ann, `${series.id}_20310318T080000Z`)).status).toBe(404);
  });

  it("an exception moved across the change, one occurrence cancelled, the series renamed, then removed: each publishes its event", async () => {
    const ann = newCaller({ timezone: "Europe/Berlin" });
    const api = client(h.bus);
    const series = await created(h.bus, ann, { startTime: "2031-03-24T09:00", recurrence: "FREQ=WEEKLY;COUNT=4", participants: ["cy@example.com"] });
    const second = `${series.id}_20310331T070000Z`;
    const third = `${series.id}_20310407T070000Z`;

    // Move the first occurrence (before the change) to after it: 1 April 10:00 Berlin.
    const first = `${series.id}_20310324T080000Z`;
    const moved = await api.update(ann, first, { startTime: "2031-04-01T10:00", title: "Moved" });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ id: first, seriesId: series.id, originalStartTime: "2031-03-24T08:00:00Z", startTime: "2031-04-01T08:00:00Z", title: "Moved" });
    expect((await api.update(ann, first, { recurrence: "FREQ=DAILY;COUNT=2" })).body.error).toMatchObject({ param: "recurrence" });

    const cancel = await call(h.bus, meetingsDelete, { params: { id: third }, query: {} }, ann);
    expect(cancel.status).toBe(204);
    expect((await api.get(ann, third)).body).toMatchObject({ status: "cancelled", seriesId: series.id });

    const upcoming = ((await api.list(ann, { filter: "upcoming", from: "2031-03-01", to: "2031-06-01" })).body) as { data: MeetingListItem[] };
    expect(upcoming.data.map((i) => [i.id, berlin(i.startTime), i.title])).toEqual([
      [second, "2031-03-31 09:00", "Sync"],
      [first, "2031-04-01 10:00", "Moved"],
      [`${series.id}_20310414T070000Z`, "2031-04-14 09:00", "Sync"],
    ]);

    const renamed = await api.update(ann, series.id, { title: "Weekly" });
    expect(renamed.body).toMatchObject({ id: series.id, title: "Weekly", recurrence: "FREQ=WEEKLY;COUNT=4" });
    expect((await api.get(ann, second)).body).toMatchObject({ title: "Weekly" });
    expect((await api.get(ann, first)).body).toMatchObject({ title: "Moved" });

    // Busy time: the occurrences, not the cancelled one.
    const busy = await h.bus.request(meetingsBusy, { mode: "test", users: [{ userId: ann.userId, email: ann.email }], from: "2031-03-30T00:00:00Z", to: "2031-04-10T00:00:00Z" });
    expect(busy.busy[0]!.intervals).toEqual([
      [Date.parse("2031-03-31T07:00:00Z") / 1000, Date.parse("2031-03-31T07:30:00Z") / 1000],
      [Date.parse("2031-04-01T08:00:00Z") / 1000, Date.parse("2031-04-01T08:30:00Z") / 1000],
    ]);

    expect((await call(h.bus, meetingsDelete, { params: { id: series.id }, query: {} }, ann)).status).toBe(204);
    expect((await api.get(ann, series.id)).status).toBe(404);
    expect((await api.get(ann, second)).status).toBe(404);

    await eventually(() => eventsOf(series.id).length === 5);
    const events = eventsOf(series.id);
    expect(events.map((e) => [e.subject.replace("meetings.v1.events.", ""), e.meetingId, e.sequence])).toEqual([
      ["meeting.created", series.id, 1],
      ["meeting.updated", first, 2],
      ["meeting.cancelled", third, 3],
      ["meeting.updated", series.id, 4],
      ["meeting.deleted", series.id, 5],
    ]);
    expect(events[1]).toMatchObject({ meeting: { id: first, seriesId: series.id, originalStartTime: "2031-03-24T08:00:00Z" }, series: { rule: "FREQ=WEEKLY;COUNT=4", timeZone: "Europe/Berlin", cancelledStarts: [] }, changedFields: ["title", "startTime"] });
    expect(events[2]).toMatchObject({ series: { cancelledStarts: ["2031-04-07T07:00:00Z"] }, sendInvites: true });
    expect(events[4]).toMatchObject({ meeting: { id: series.id, status: "cancelled", recurrence: "FREQ=WEEKLY;COUNT=4" } });
    // The series' events carry the changed occurrence beside the cancelled one, for calendars sent the series again.
    const movedOccurrence = { originalStartTime: "2031-03-24T08:00:00Z", title: "Moved", startTime: "2031-04-01T08:00:00Z", duration: "30 mins", participants: ["cy@example.com"], sequence: 2 };
    expect(events[3]).toMatchObject({ series: { cancelledStarts: ["2031-04-07T07:00:00Z"], changedOccurrences: [movedOccurrence], droppedOccurrences: [] } });
    expect(events[4]).toMatchObject({ series: { changedOccurrences: [movedOccurrence] } });
  });

  it("a change of the whole series keeps the occurrences that have ended as they were", async () => {
    const ann = newCaller({ timezone: "UTC" });
    const api = client(h.bus);
    const start = DateTime.utc().startOf("hour").plus({ hours: 1 }).minus({ days: 3 });
    const series = await created(h.bus, ann, { startTime: start.toISO({ suppressMilliseconds: true }), recurrence: "FREQ=DAILY;COUNT=6" });
    expect((await api.update(ann, series.id, { title: "Renamed" })).status).toBe(200);
    const all = ((await api.list(ann, { filter: "all" })).body) as { data: MeetingListItem[] };
    const titles = [...all.data].reverse().map((i) => i.title);
    expect(titles).toEqual(["Sync", "Sync", "Sync", "Renamed", "Renamed", "Renamed"]);
  });

  it("a new rule or time for the series: checked like a new one, its occurrences replace the old ones, changes of single occurrences on days it no longer has dropped", async () => {
    const ann = newCaller({ timezone: "America/New_York" });
    const api = client(h.bus);
    const series = await created(h.bus, ann, { startTime: "2031-06-02T09:00", recurrence: "FREQ=WEEKLY;COUNT=4" });
    await api.update(ann, `${series.id}_20310609T130000Z`, { title: "Changed" });
    const bad = await api.update(ann, series.id, { recurrence: "FREQ=WEEKLY;BYDAY=TU;COUNT=2" });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ param: "recurrence" });
    const retimed = await api.update(ann, series.id, { recurrence: "FREQ=DAILY;COUNT=3", startTime: "2031-06-03T08:00" });
    expect(retimed.body).toMatchObject({ recurrence: "FREQ=DAILY;COUNT=3", startTime: "2031-06-03T12:00:00Z" });
    const listed = (await api.list(ann, { filter: "all", from: "2031-06-01", to: "2031-07-01" })).body as { data: MeetingListItem[] };
    expect(listed.data.map((i) => [i.startTime, i.title]).reverse()).toEqual([
      ["2031-06-03T12:00:00Z", "Sync"],
      ["2031-06-04T12:00:00Z", "Sync"],
      ["2031-06-05T12:00:00Z", "Sync"],
    ]);
    await eventually(() => eventsOf(series.id).length === 3);
    expect(eventsOf(series.id)[2]).toMatchObject({ changedFields: ["startTime", "recurrence"], sequence: 3, series: { rule: "FREQ=DAILY;COUNT=3", timeZone: "America/New_York", changedOccurrences: [] } });
    // The changed occurrence the new rule dropped is named, so those added to it only can be told.
    expect(eventsOf(series.id)[2]!.series!.droppedOccurrences!.map((o) => [o.originalStartTime, o.title])).toEqual([["2031-06-09T13:00:00Z", "Changed"]]);
  });

  it("a new time of day keeps each changed or cancelled occurrence on its day, at the new time; a new rule keeps those of the days it still has", async () => {
    const ann = newCaller({ timezone: "Europe/Berlin" });
    const api = client(h.bus);
    const series = await created(h.bus, ann, { startTime: "2031-09-01T09:00", recurrence: "FREQ=WEEKLY;BYDAY=MO,WE;COUNT=6" });
    expect((await api.update(ann, `${series.id}_20310903T070000Z`, { status: "cancelled" })).status).toBe(200);
    expect((await api.update(ann, `${series.id}_20310908T070000Z`, { title: "Planning" })).status).toBe(200);
    expect((await api.update(ann, `${series.id}_20310910T070000Z`, { startTime: "2031-09-11T14:00" })).status).toBe(200);
    expect((await api.update(ann, series.id, { startTime: "2031-09-01T10:30" })).status).toBe(200);
    const listed = async () => {
      const page = (await api.list(ann, { filter: "all", from: "2031-08-01", to: "2031-10-01" })).body as { data: MeetingListItem[] };
      return [...page.data].reverse().map((i) => [berlin(i.startTime), i.title, i.status, i.id.slice(-16)]);
    };
    expect(await listed()).toEqual([
      ["2031-09-01 10:30", "Sync", "confirmed", "20310901T083000Z"],
      ["2031-09-03 10:30", "Sync", "cancelled", "20310903T083000Z"],
      ["2031-09-08 10:30", "Planning", "confirmed", "20310908T083000Z"],
      ["2031-09-11 14:00", "Sync", "confirmed", "20310910T083000Z"],
      ["2031-09-15 10:30", "Sync", "confirmed", "20310915T083000Z"],
      ["2031-09-17 10:30", "Sync", "confirmed", "20310917T083000Z"],
    ]);
    await eventually(() => eventsOf(series.id).some((e) => e.meetingId === series.id && "changedFields" in e && e.changedFields.includes("startTime")));
    const retimed = eventsOf(series.id).find((e) => e.meetingId === series.id && "changedFields" in e && e.changedFields.includes("startTime"))!;
    expect(retimed.series?.cancelledStarts).toEqual(["2031-09-03T08:30:00Z"]);

    // Mondays only: Wednesday's cancelled and moved occurrences have no occurrence left to change.
    expect((await api.update(ann, series.id, { recurrence: "FREQ=WEEKLY;BYDAY=MO;COUNT=3" })).status).toBe(200);
    expect(await listed()).toEqual([
      ["2031-09-01 10:30", "Sync", "confirmed", "20310901T083000Z"],
      ["2031-09-08 10:30", "Planning", "confirmed", "20310908T083000Z"],
      ["2031-09-15 10:30", "Sync", "confirmed", "20310915T083000Z"],
    ]);
  });

  it("lists walk occurrences and single meetings without gaps or repeats, in every filter and page size (property)", async () => {
    const ann = newCaller({ timezone: "Australia/Lord_Howe" });
    const api = client(h.bus);
    await created(h.bus, ann, { startTime: "2031-09-29T02:00", recurrence: "FREQ=DAILY;COUNT=12" });
    await created(h.bus, ann, { startTime: "2031-09-30T09:30", recurrence: "FREQ=WEEKLY;INTERVAL=2;COUNT=5", status: "draft" });
    await created(h.bus, newCaller(), { startTime: "2031-10-01T00:00:00Z", recurrence: "FREQ=DAILY;COUNT=3", participants: [ann.email] });
    for (const t of ["2031-10-02T02:00", "2031-10-05T02:30", "2031-10-05T02:45", "2031-10-08T12:00"]) await created(h.bus, ann, { startTime: t });
    const cancelled = ((await api.list(ann, { filter: "all", from: "2031-10-03", to: "2031-10-04" })).body).data[0] as MeetingListItem;
    await api.update(ann, cancelled.id, { status: "cancelled" });

    for (const filter of ["all", "draft", "upcoming"]) {
      const whole = await walk(ann, { filter, from: "2031-09-01", to: "2031-12-31" }, 100);
      expect(new Set(whole.map((i) => i.id)).size).toBe(whole.length);
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 1, max: 7 }), async (limit) => {
          const walked = await walk(ann, { filter, from: "2031-09-01", to: "2031-12-31" }, limit);
          expect(walked.map((i) => i.id)).toEqual(whole.map((i) => i.id));
        }),
        { numRuns: 4 },
      );
    }
    const all = await walk(ann, { filter: "all", from: "2031-09-01", to: "2031-12-31" }, 100);
    expect(all).toHaveLength(12 + 5 + 3 + 4);
    expect(all.filter((i) => i.status === "cancelled")).toHaveLength(1);
  });

  it("a series its organizer also attends is listed once, and so is one two users of a busy query share", async () => {
    const eva = newCaller({ timezone: "UTC" });
    const ned = newCaller({ timezone: "UTC" });
    const api = client(h.bus);
    const series = await created(h.bus, eva, { startTime: "2032-01-05T10:00", recurrence: "FREQ=WEEKLY;COUNT=3", participants: [eva.email, ned.email] });
    const starts = ["2032-01-05T10:00:00Z", "2032-01-12T10:00:00Z", "2032-01-19T10:00:00Z"];
    for (const who of [eva, ned]) {
      const page = (await api.list(who, { filter: "all", from: "2032-01-01", to: "2032-02-01" })).body as { data: MeetingListItem[] };
      // filter=all lists the latest first.
      expect(page.data.map((i) => [i.seriesId, i.startTime])).toEqual([...starts].reverse().map((t) => [series.id, t]));
    }
    const busy = await h.bus.request(meetingsBusy, { mode: "test", users: [eva, ned].map((u) => ({ userId: u.userId, email: u.email })), from: "2032-01-01T00:00:00Z", to: "2032-02-01T00:00:00Z" });
    const intervals = starts.map((t) => [Date.parse(t) / 1_000, Date.parse(t) / 1_000 + 1_800]);
    expect(busy.busy).toEqual([eva, ned].map((u) => ({ userId: u.userId, intervals })));
  });

  it("an id that is neither a meeting nor an occurrence answers 404", async () => {
    const ann = newCaller();
    for (const id of ["mtg_x_20310101T000000Z", "nonsense", "mtg_aaaaaaaaaaaaaaaaaaaaaaaa_20311301T000000Z", "mtg_aaaaaaaaaaaaaaaaaaaaaaaa_00000101T000000Z"]) {
      expect((await client(h.bus).get(ann, id)).status).toBe(404);
    }
    const own = await created(h.bus, ann, { startTime: "2031-01-06T10:00:00Z", recurrence: "FREQ=DAILY;COUNT=3" });
    for (const at of ["00010101T000000Z", "99991231T235959Z", "20310106T100001Z"]) {
      expect((await client(h.bus).get(ann, `${own.id}_${at}`)).status).toBe(404);
      expect((await client(h.bus).update(ann, `${own.id}_${at}`, { title: "x" })).status).toBe(404);
      expect((await client(h.bus).list(ann, { startingAfter: `${own.id}_${at}` })).status).toBe(400);
    }
    const m: Meeting = await created(h.bus, ann, { startTime: "2031-01-01T10:00:00Z" });
    expect(m).toMatchObject({ recurrence: null, seriesId: null, originalStartTime: null });
    expect((await client(h.bus).update(ann, m.id, { recurrence: "FREQ=DAILY;COUNT=2" })).body.error).toMatchObject({ param: "recurrence" });
  });
});
