import { describe, expect, it } from "vitest";
import { call, createUserWithKey, expectError, systemPerSuite, WIRINGS } from "../harness.js";

interface Item {
  id: string;
  startTime: string;
  seriesId: string | null;
  status: string;
  title: string;
}

describe.each(WIRINGS)("recurring meetings end to end (%s)", async (wiring) => {
  const suite = await systemPerSuite(wiring);
  const { available } = suite;

  it.runIf(available)("create, list, an exception, cancel one, cancel all: 15:00 Berlin is 09:00 or 10:00 in New York as the changes fall", async () => {
    const org = await createUserWithKey(suite.url, { timezone: "Europe/Berlin" });
    const guest = await createUserWithKey(suite.url, { timezone: "America/New_York" });
    const outsider = await createUserWithKey(suite.url);
    const bad = await call(suite.url, "POST", "/v1/meetings", {
      key: org.key,
      body: { title: "Weekly", duration: "1 hour", startTime: "2031-03-03T15:00", participants: [guest.email], recurrence: "FREQ=SECONDLY;COUNT=2" },
    });
    expectError(bad, 400, "invalid_request");
    expect(bad.body.error.param).toBe("recurrence");

    const created = await call(suite.url, "POST", "/v1/meetings", {
      key: org.key,
      body: { title: "Weekly", duration: "1 hour", startTime: "2031-03-03T15:00", participants: [guest.email], recurrence: "FREQ=WEEKLY;BYDAY=MO;COUNT=6" },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ recurrence: "FREQ=WEEKLY;COUNT=6;BYDAY=MO", seriesId: null, originalStartTime: null, startTime: "2031-03-03T14:00:00Z" });
    const seriesId = created.body.id as string;
    const occurrence = (utc: string) => `${seriesId}_${utc}`;

    // The guest's calendar: six occurrences, the same walked a page of two at a time.
    const all = await call(suite.url, "GET", "/v1/meetings?filter=upcoming&from=2031-03-01&to=2031-05-01&limit=100", { key: guest.key });
    expect(all.body.data.map((m: Item) => m.startTime)).toEqual(["2031-03-03T14:00:00Z", "2031-03-10T14:00:00Z", "2031-03-17T14:00:00Z", "2031-03-24T14:00:00Z", "2031-03-31T13:00:00Z", "2031-04-07T13:00:00Z"]);
    expect(all.body.data.every((m: Item) => m.seriesId === seriesId)).toBe(true);
    const walked: string[] = [];
    let after = "";
    for (let page = 0; page < 10; page++) {
      const res = await call(suite.url, "GET", `/v1/meetings?filter=upcoming&from=2031-03-01&to=2031-05-01&limit=2${after}`, { key: guest.key });
      walked.push(...res.body.data.map((m: Item) => m.id));
      if (!res.body.hasMore) break;
      after = `&startingAfter=${res.body.data[res.body.data.length - 1].id}`;
    }
    expect(walked).toEqual(all.body.data.map((m: Item) => m.id));
    expectError(await call(suite.url, "GET", `/v1/meetings/${occurrence("20310310T140000Z")}`, { key: outsider.key }), 404, "not_found");

    // The guest's day view: 09:00 in New York before the US change, 10:00 in the weeks between the changes, 09:00 again after Europe's.
    const busyOn = async (date: string) => (await call(suite.url, "GET", `/v1/availability?date=${date}`, { key: guest.key })).body.slots.filter((s: { status: string }) => s.status === "busy");
    expect(await busyOn("2031-03-03")).toEqual([{ start: "09:00", end: "10:00", status: "busy" }]);
    expect(await busyOn("2031-03-10")).toEqual([{ start: "10:00", end: "11:00", status: "busy" }]);
    expect(await busyOn("2031-03-31")).toEqual([{ start: "09:00", end: "10:00", status: "busy" }]);

    // Free-busy and recommended times count occurrences as meetings.
    const freeBusy = await call(suite.url, "POST", "/v1/availability/free-busy", { key: org.key, body: { participants: [org.email], from: "2031-03-10T00:00:00Z", to: "2031-03-11T00:00:00Z" } });
    expect(freeBusy.body.people).toEqual([{ email: org.email, busy: [{ start: "2031-03-10T14:00:00Z", end: "2031-03-10T15:00:00Z" }], busyComplete: true }]);
    expect((await call(suite.url, "POST", "/v1/contacts", { key: guest.key, body: { email: org.email } })).status).toBe(201);
    const recommended = await call(suite.url, "POST", "/v1/availability/recommended", {
      key: org.key,
      body: { participants: [guest.email], duration: "1 hour", from: "2031-03-10T13:00:00Z", to: "2031-03-10T16:00:00Z", limit: 50 },
    });
    expect(recommended.status).toBe(200);
    expect(recommended.body.slots.length).toBeGreaterThan(0);
    for (const slot of recommended.body.slots) expect(slot.end <= "2031-03-10T14:00:00Z" || slot.start >= "2031-03-10T15:00:00Z").toBe(true);

    // An exception: the 17 March occurrence moves to Tuesday 16:00 Berlin.
    const moved = await call(suite.url, "PATCH", `/v1/meetings/${occurrence("20310317T140000Z")}`, { key: org.key, body: { startTime: "2031-03-18T16:00", title: "Moved" } });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ id: occurrence("20310317T140000Z"), seriesId, originalStartTime: "2031-03-17T14:00:00Z", startTime: "2031-03-18T15:00:00Z", title: "Moved" });
    expectError(await call(suite.url, "PATCH", `/v1/meetings/${occurrence("20310317T140000Z")}`, { key: guest.key, body: { title: "Mine" } }), 403, "forbidden");
    expect(await busyOn("2031-03-17")).toEqual([]);
    expect(await busyOn("2031-03-18")).toEqual([{ start: "11:00", end: "12:00", status: "busy" }]);

    // Cancel one.
    expect((await call(suite.url, "DELETE", `/v1/meetings/${occurrence("20310324T140000Z")}`, { key: org.key })).status).toBe(204);
    expect((await call(suite.url, "GET", `/v1/meetings/${occurrence("20310324T140000Z")}`, { key: guest.key })).body.status).toBe("cancelled");
    expect(await busyOn("2031-03-24")).toEqual([]);
    const upcoming = await call(suite.url, "GET", "/v1/meetings?from=2031-03-01&to=2031-05-01", { key: guest.key });
    expect(upcoming.body.data.map((m: Item) => [m.startTime, m.title])).toEqual([
      ["2031-03-03T14:00:00Z", "Weekly"],
      ["2031-03-10T14:00:00Z", "Weekly"],
      ["2031-03-18T15:00:00Z", "Moved"],
      ["2031-03-31T13:00:00Z", "Weekly"],
      ["2031-04-07T13:00:00Z", "Weekly"],
    ]);

    // Cancel all: the series is cancelled, every occurrence with it; then it is removed.
    const cancelled = await call(suite.url, "PATCH", `/v1/meetings/${seriesId}`, { key: org.key, body: { status: "cancelled" } });
    expect(cancelled.body).toMatchObject({ id: seriesId, status: "cancelled" });
    expect((await call(suite.url, "GET", "/v1/meetings?from=2031-03-01&to=2031-05-01", { key: guest.key })).body.data).toEqual([]);
    expect(await busyOn("2031-03-18")).toEqual([]);
    expect(await busyOn("2031-03-10")).toEqual([]);
    expect((await call(suite.url, "DELETE", `/v1/meetings/${seriesId}`, { key: org.key })).status).toBe(204);
    expectError(await call(suite.url, "GET", `/v1/meetings/${seriesId}`, { key: org.key }), 404, "not_found");
    expectError(await call(suite.url, "GET", `/v1/meetings/${occurrence("20310317T140000Z")}`, { key: guest.key }), 404, "not_found");
    expect((await call(suite.url, "GET", "/v1/meetings?filter=all&from=2031-03-01&to=2031-05-01", { key: guest.key })).body.data).toEqual([]);
  });

  it.runIf(available)("moving the series to another time of day keeps its cancelled and changed occurrences on their days; the guest's day view follows", async () => {
    const org = await createUserWithKey(suite.url, { timezone: "Europe/Berlin" });
    const guest = await createUserWithKey(suite.url, { timezone: "Europe/Berlin" });
    const created = await call(suite.url, "POST", "/v1/meetings", {
      key: org.key,
      body: { title: "Standup", duration: "30 mins", startTime: "2031-09-01T09:00", participants: [guest.email], recurrence: "FREQ=DAILY;COUNT=5" },
    });
    expect(created.status).toBe(201);
    const seriesId = created.body.id as string;
    expect((await call(suite.url, "DELETE", `/v1/meetings/${seriesId}_20310902T070000Z`, { key: org.key })).status).toBe(204);
    expect((await call(suite.url, "PATCH", `/v1/meetings/${seriesId}_20310903T070000Z`, { key: org.key, body: { title: "Demo" } })).status).toBe(200);
    expect((await call(suite.url, "PATCH", `/v1/meetings/${seriesId}`, { key: org.key, body: { startTime: "2031-09-01T11:00" } })).status).toBe(200);

    const listed = await call(suite.url, "GET", "/v1/meetings?filter=all&from=2031-09-01&to=2031-09-08&limit=100", { key: guest.key });
    expect((listed.body.data as Item[]).map((m) => [m.startTime, m.title, m.status]).reverse()).toEqual([
      ["2031-09-01T09:00:00Z", "Standup", "confirmed"],
      ["2031-09-02T09:00:00Z", "Standup", "cancelled"],
      ["2031-09-03T09:00:00Z", "Demo", "confirmed"],
      ["2031-09-04T09:00:00Z", "Standup", "confirmed"],
      ["2031-09-05T09:00:00Z", "Standup", "confirmed"],
    ]);
    const day = async (date: string) => (await call(suite.url, "GET", `/v1/availability?date=${date}`, { key: guest.key })).body.slots as { start: string; status: string }[];
    expect((await day("2031-09-02")).filter((s) => s.status === "busy")).toEqual([]);
    expect((await day("2031-09-03")).filter((s) => s.status === "busy").map((s) => s.start)).toEqual(["11:00"]);
  });
});
