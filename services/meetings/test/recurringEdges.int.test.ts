import { meetingsBusy, meetingsDelete, type MeetingListItem } from "@sched/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, client, created, newCaller, startMeetings, type TestMeetings } from "./harness.js";

let h: TestMeetings;

beforeAll(async () => {
  h = await startMeetings();
});
afterAll(async () => {
  await h?.close();
});

const remove = (caller: ReturnType<typeof newCaller>, id: string) => call(h.bus, meetingsDelete, { params: { id }, query: {} }, caller);

describe("recurring meetings: who may change what, and the series' range", () => {
  it("someone on one occurrence alone sees it and its series, and is refused changes as any participant is (403); others get 404", async () => {
    const ann = newCaller({ timezone: "Europe/Berlin" });
    const api = client(h.bus);
    const guest = newCaller();
    const stranger = newCaller();
    const series = await created(h.bus, ann, { startTime: "2032-05-03T09:00", recurrence: "FREQ=WEEKLY;COUNT=4", participants: ["bo@example.com"] });
    const second = `${series.id}_20320510T070000Z`;
    const third = `${series.id}_20320517T070000Z`;
    expect((await api.update(ann, second, { participants: ["bo@example.com", guest.email] })).status).toBe(200);

    expect((await api.get(guest, second)).status).toBe(200);
    expect((await api.get(guest, series.id)).status).toBe(200);
    for (const id of [second, series.id]) {
      const patch = await api.update(guest, id, { title: "Mine now" });
      expect(patch.status).toBe(403);
      expect(patch.body.error).toMatchObject({ code: "forbidden" });
      const removal = await remove(guest, id);
      expect(removal.status).toBe(403);
      expect(removal.body.error).toMatchObject({ code: "forbidden" });
    }
    // An occurrence that does not list them stays unseen, as GET and lists have it.
    expect((await api.get(guest, third)).status).toBe(404);
    expect((await api.update(guest, third, { title: "x" })).status).toBe(404);
    expect((await remove(guest, third)).status).toBe(404);
    for (const id of [second, third, series.id]) {
      expect((await api.get(stranger, id)).status).toBe(404);
      expect((await api.update(stranger, id, { title: "x" })).status).toBe(404);
      expect((await remove(stranger, id)).status).toBe(404);
    }
    // Nothing was changed by the refused requests.
    expect((await api.get(ann, second)).body).toMatchObject({ title: "Sync", status: "confirmed" });
    expect((await api.get(ann, series.id)).body).toMatchObject({ title: "Sync", status: "confirmed" });
  });

  it("the last occurrence moved past the rule's last end is still found by GET, lists, busy time, and keeps the series changeable", async () => {
    const ann = newCaller({ timezone: "UTC" });
    const api = client(h.bus);
    const series = await created(h.bus, ann, { startTime: "2032-06-07T09:00", recurrence: "FREQ=WEEKLY;COUNT=3", participants: ["cy@example.com"] });
    const last = `${series.id}_20320621T090000Z`;
    expect((await api.update(ann, last, { startTime: "2032-07-05T15:00" })).status).toBe(200);

    expect((await api.get(ann, last)).body).toMatchObject({ id: last, startTime: "2032-07-05T15:00:00Z" });
    const list = (await api.list(ann, { filter: "all", from: "2032-07-01", to: "2032-07-10" })).body as { data: MeetingListItem[] };
    expect(list.data.map((i) => i.id)).toEqual([last]);
    const upcoming = (await api.list(ann, { filter: "upcoming", from: "2032-06-22", to: "2032-08-01" })).body as { data: MeetingListItem[] };
    expect(upcoming.data.map((i) => i.id)).toEqual([last]);
    const cy = newCaller({ email: "cy@example.com" });
    const theirs = (await api.list(cy, { filter: "all", from: "2032-07-01", to: "2032-07-10" })).body as { data: MeetingListItem[] };
    expect(theirs.data.map((i) => i.id)).toEqual([last]);
    const busy = await h.bus.request(meetingsBusy, { mode: "test", users: [{ userId: ann.userId, email: ann.email }], from: "2032-07-05T00:00:00Z", to: "2032-07-06T00:00:00Z" });
    expect(busy.busy[0]!.intervals).toEqual([[Date.parse("2032-07-05T15:00:00Z") / 1000, Date.parse("2032-07-05T15:30:00Z") / 1000]]);

    // A change of the whole series' duration keeps the moved occurrence's own time and range.
    expect((await api.update(ann, series.id, { title: "Renamed" })).status).toBe(200);
    const after = (await api.list(ann, { filter: "all", from: "2032-07-01", to: "2032-07-10" })).body as { data: MeetingListItem[] };
    expect(after.data.map((i) => [i.id, i.startTime])).toEqual([[last, "2032-07-05T15:00:00Z"]]);
  });

  it("a change that would make the series' event too big for the bus is refused with 400 before anything is written; the series stays usable", async () => {
    const ann = newCaller({ timezone: "UTC" });
    const api = client(h.bus);
    const participants = Array.from({ length: 100 }, (_, i) => `${String(i).padStart(3, "0")}${"a".repeat(60)}@${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(58)}.com`);
    const series = await created(h.bus, ann, { startTime: "2033-01-03T09:00", recurrence: "FREQ=DAILY;COUNT=40", participants, description: "d".repeat(10_000), title: "t".repeat(200) });
    const idOf = (day: number) => `${series.id}_203301${String(3 + day).padStart(2, "0")}T090000Z`;
    let changed = 0;
    let refused: { status: number; body: { error?: { code: string; message: string } } } | undefined = undefined;
    for (let day = 0; day < 28 && !refused; day++) {
      const answer = await api.update(ann, idOf(day), { description: `${day}`.padEnd(10_000, "x"), startTime: `2033-01-${String(3 + day).padStart(2, "0")}T10:00` });
      if (answer.status === 200) changed++;
      else refused = answer as unknown as { status: number; body: { error?: { code: string; message: string } } };
    }
    // Each such occurrence adds about 36 KB to the series' events: about twenty fit under the limit.
    expect(changed).toBeGreaterThanOrEqual(18);
    expect(refused?.status).toBe(400);
    expect(refused?.body.error).toMatchObject({ code: "invalid_request" });
    expect(refused?.body.error?.message).toMatch(/bytes, over the 921600/);
    const untouched = (await api.get(ann, idOf(changed))).body as { description: string; startTime: string };
    expect([untouched.description.length, untouched.description[0], untouched.startTime]).toEqual([10_000, "d", `2033-01-${String(3 + changed).padStart(2, "0")}T09:00:00Z`]);
    // A change that does not grow the event still goes through.
    expect((await api.update(ann, idOf(0), { title: "Shorter" })).status).toBe(200);
  });
});
