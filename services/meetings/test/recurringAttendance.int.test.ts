import { MemoryBus, type Stoppable } from "@sched/bus";
import { meetingsBusy, type MeetingListItem } from "@sched/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { meetingsService } from "../src/index.js";
import { client, created, logger, newCaller, recordAnswer, startMeetings, type TestMeetings } from "./harness.js";

/**
 * Who an occurrence concerns: an exception may add someone the series does
 * not list, or leave out someone it does, for that occurrence alone; lists,
 * GET, cursors and busy time follow the occurrence. And a second replica on
 * the same database, which keeps the series it read, sees every change made
 * through the first.
 */
let h: TestMeetings;
let replicaBus: MemoryBus;
let replica: Stoppable;

beforeAll(async () => {
  h = await startMeetings();
  replicaBus = new MemoryBus(logger);
  replica = await meetingsService.start({ bus: replicaBus, db: h.db, logger, config: {} });
});
afterAll(async () => {
  await replica?.stop();
  await replicaBus?.close();
  await h?.close();
});

const at = (iso: string) => Date.parse(iso) / 1_000;
const ids = (body: { data: MeetingListItem[] }) => body.data.map((i) => i.id);

describe("who an occurrence concerns", () => {
  it("an occurrence with a participant the series does not list is in that person's list, GET, cursor and busy time, and no other occurrence is", async () => {
    const ann = newCaller();
    const bo = newCaller();
    const dee = newCaller();
    const api = client(h.bus);
    const series = await created(h.bus, ann, { startTime: "2032-02-02T10:00:00Z", recurrence: "FREQ=DAILY;COUNT=5", participants: [bo.email] });
    const second = `${series.id}_20320203T100000Z`;
    const fourth = `${series.id}_20320205T100000Z`;

    expect(ids((await api.list(dee, { filter: "all" })).body)).toEqual([]);
    expect((await api.update(ann, second, { participants: [bo.email, dee.email] })).status).toBe(200);
    // Bo leaves the fourth occurrence only.
    expect((await api.update(ann, fourth, { participants: [ann.email] })).status).toBe(200);

    for (const filter of ["all", "upcoming"]) {
      expect(ids((await api.list(dee, { filter })).body)).toEqual([second]);
      expect(ids((await api.list(dee, { filter, from: "2032-02-01", to: "2032-03-01" })).body)).toEqual([second]);
    }
    expect((await api.get(dee, second)).body).toMatchObject({ id: second, seriesId: series.id, participants: [bo.email, dee.email] });
    expect((await api.get(dee, `${series.id}_20320204T100000Z`)).status).toBe(404);
    // Seeing one occurrence, they see the series it belongs to (as a participant who may not change it: recurringEdges).
    expect((await api.get(dee, series.id)).body).toMatchObject({ id: series.id, participants: [bo.email] });
    expect((await api.list(dee, { filter: "upcoming", startingAfter: second })).body).toEqual({ data: [], hasMore: false });

    const boList = (await api.list(bo, { filter: "upcoming" })).body as { data: MeetingListItem[] };
    expect(boList.data.map((i) => i.startTime)).toEqual(["2032-02-02T10:00:00Z", "2032-02-03T10:00:00Z", "2032-02-04T10:00:00Z", "2032-02-06T10:00:00Z"]);
    expect((await api.get(bo, fourth)).status).toBe(404);
    expect((await api.list(bo, { filter: "upcoming", startingAfter: fourth })).status).toBe(400);
    // The organizer sees all five.
    expect(ids((await api.list(ann, { filter: "upcoming" })).body)).toHaveLength(5);

    const busy = await h.bus.request(meetingsBusy, {
      mode: "test",
      users: [
        { userId: dee.userId, email: dee.email },
        { userId: bo.userId, email: bo.email },
      ],
      from: "2032-02-01T00:00:00Z",
      to: "2032-02-10T00:00:00Z",
    });
    expect(busy.busy).toEqual([
      { userId: dee.userId, intervals: [[at("2032-02-03T10:00:00Z"), at("2032-02-03T10:30:00Z")]] },
      {
        userId: bo.userId,
        intervals: [
          [at("2032-02-02T10:00:00Z"), at("2032-02-02T10:30:00Z")],
          [at("2032-02-03T10:00:00Z"), at("2032-02-03T10:30:00Z")],
          [at("2032-02-04T10:00:00Z"), at("2032-02-04T10:30:00Z")],
          [at("2032-02-06T10:00:00Z"), at("2032-02-06T10:30:00Z")],
        ],
      },
    ]);

    // Taken off the occurrence again: out of Dee's calendar.
    expect((await api.update(ann, second, { participants: [bo.email] })).status).toBe(200);
    expect(ids((await api.list(dee, { filter: "all" })).body)).toEqual([]);
    expect((await h.bus.request(meetingsBusy, { mode: "test", users: [{ userId: dee.userId, email: dee.email }], from: "2032-02-01T00:00:00Z", to: "2032-02-10T00:00:00Z" })).busy).toEqual([
      { userId: dee.userId, intervals: [] },
    ]);
  });
});

describe("two replicas on one database", () => {
  it("a replica that has read a series sees each change made through the other at its next list and busy time", async () => {
    const ann = newCaller();
    const dee = newCaller();
    const writer = client(h.bus);
    const reader = client(replicaBus);
    const busyOf = async (user: { userId: string; email: string }) =>
      (await replicaBus.request(meetingsBusy, { mode: "test", users: [{ userId: user.userId, email: user.email }], from: "2032-05-01T00:00:00Z", to: "2032-05-10T00:00:00Z" })).busy[0]!.intervals;
    const titles = async () => ((await reader.list(ann, { filter: "upcoming" })).body as { data: MeetingListItem[] }).data.map((i) => i.title);

    const series = await created(h.bus, ann, { startTime: "2032-05-03T09:00:00Z", recurrence: "FREQ=DAILY;COUNT=3" });
    expect(await titles()).toEqual(["Sync", "Sync", "Sync"]);
    expect(await busyOf(ann)).toEqual([[at("2032-05-03T09:00:00Z"), at("2032-05-03T09:30:00Z")], [at("2032-05-04T09:00:00Z"), at("2032-05-04T09:30:00Z")], [at("2032-05-05T09:00:00Z"), at("2032-05-05T09:30:00Z")]]);

    expect((await writer.update(ann, series.id, { title: "Renamed" })).status).toBe(200);
    expect(await titles()).toEqual(["Renamed", "Renamed", "Renamed"]);

    const first = `${series.id}_20320503T090000Z`;
    expect((await writer.update(ann, first, { title: "Moved", startTime: "2032-05-03T15:00:00Z", participants: [dee.email] })).status).toBe(200);
    expect(await titles()).toEqual(["Moved", "Renamed", "Renamed"]);
    expect(ids((await reader.list(dee, { filter: "upcoming" })).body)).toEqual([first]);
    expect(await busyOf(dee)).toEqual([[at("2032-05-03T15:00:00Z"), at("2032-05-03T15:30:00Z")]]);

    expect((await writer.update(ann, first, { status: "cancelled" })).status).toBe(200);
    expect(await titles()).toEqual(["Renamed", "Renamed"]);
    expect(await busyOf(dee)).toEqual([]);

    // The new rule still has the 3rd, so its cancellation stays (docs/recurrence.md, "A new time or rule"); the 5th is gone.
    expect((await writer.update(ann, series.id, { recurrence: "FREQ=DAILY;COUNT=2" })).status).toBe(200);
    expect(((await reader.list(ann, { filter: "upcoming" })).body as { data: MeetingListItem[] }).data.map((i) => i.startTime)).toEqual(["2032-05-04T09:00:00Z"]);

    await writer.update(ann, series.id, { status: "cancelled" });
    expect(await titles()).toEqual([]);
    expect(await busyOf(ann)).toEqual([]);
  });

  it("an answer to one occurrence given through one replica takes that occurrence out of the decliner's busy time on the other", async () => {
    const ann = newCaller();
    const dee = newCaller();
    const series = await created(h.bus, ann, { startTime: "2032-06-07T09:00:00Z", recurrence: "FREQ=DAILY;COUNT=3", participants: [dee.email] });
    const busyOfDee = async () =>
      (await replicaBus.request(meetingsBusy, { mode: "test", users: [{ userId: dee.userId, email: dee.email }], from: "2032-06-01T00:00:00Z", to: "2032-06-12T00:00:00Z" })).busy[0]!.intervals;
    const days = [7, 8, 9].map((d) => [at(`2032-06-0${d}T09:00:00Z`), at(`2032-06-0${d}T09:30:00Z`)]);
    // The replica keeps the series (and its answers) from this first busy time on.
    expect(await busyOfDee()).toEqual(days);
    expect(await recordAnswer(h.bus, ann, `${series.id}_20320608T090000Z`, dee.email, "declined", "2032-05-01T09:00:00Z")).toEqual({ outcome: "applied" });
    expect(await busyOfDee()).toEqual([days[0], days[2]]);
    expect(await recordAnswer(h.bus, ann, `${series.id}_20320608T090000Z`, dee.email, "accepted", "2032-05-01T10:00:00Z")).toEqual({ outcome: "applied" });
    expect(await busyOfDee()).toEqual(days);
  });

  it("every write of a series, of its exceptions or of its occurrences' own answers takes the series' next version, whatever writes it", async () => {
    const ann = newCaller();
    const series = await created(h.bus, ann, { startTime: "2032-07-01T09:00:00Z", recurrence: "FREQ=DAILY;COUNT=3" });
    const version = async () => Number(((await h.db("meeting_series").where({ id: series.id }).first("version")) as { version: string | number }).version);
    const v0 = await version();
    await h.db("meeting_series").where({ id: series.id }).update({ title: "By hand" });
    expect(await version()).toBe(v0 + 1);
    const exception = { series_id: series.id, title: "X", description: "", duration: "30 mins", participants: ["x@example.com"], status: "confirmed", sequence: 9 };
    await h.db("meeting_exceptions").insert([
      { ...exception, original_start: "2032-07-02T09:00:00Z", start_time: "2032-07-02T09:00:00Z", end_time: "2032-07-02T09:30:00Z" },
      { ...exception, original_start: "2032-07-03T09:00:00Z", start_time: "2032-07-03T09:00:00Z", end_time: "2032-07-03T09:30:00Z" },
    ]);
    expect(await version()).toBe(v0 + 2);
    await h.db("meeting_exceptions").where({ series_id: series.id }).update({ title: "Y" });
    expect(await version()).toBe(v0 + 3);
    await h.db("meeting_exceptions").where({ series_id: series.id, original_start: "2032-07-02T09:00:00Z" }).delete();
    expect(await version()).toBe(v0 + 4);
    const ownAnswer = { series_id: series.id, email: "x@example.com", response: "declined", responded_at: "2032-06-01T00:00:00Z" };
    await h.db("occurrence_responses").insert([
      { ...ownAnswer, original_start: "2032-07-01T09:00:00Z" },
      { ...ownAnswer, original_start: "2032-07-03T09:00:00Z" },
    ]);
    expect(await version()).toBe(v0 + 5);
    await h.db("occurrence_responses").where({ series_id: series.id }).update({ response: "accepted" });
    expect(await version()).toBe(v0 + 6);
    await h.db("occurrence_responses").where({ series_id: series.id, original_start: "2032-07-01T09:00:00Z" }).delete();
    expect(await version()).toBe(v0 + 7);
    // Removing the series takes its exceptions and answers with it.
    await h.db("meeting_series").where({ id: series.id }).delete();
    expect(await h.db("meeting_exceptions").where({ series_id: series.id })).toEqual([]);
    expect(await h.db("occurrence_responses").where({ series_id: series.id })).toEqual([]);
  });
});
