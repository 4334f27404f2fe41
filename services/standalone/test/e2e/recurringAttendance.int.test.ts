import { describe, expect, it } from "vitest";
import { call, createUserWithKey, expectError, systemPerSuite, WIRINGS } from "../harness.js";

interface Item {
  id: string;
  startTime: string;
}

// Monday 2 to Friday 6 February 2032, at 10:00 UTC: inside the default working hours (Monday to Friday, 09:00–17:00).
const SERIES = { title: "Daily", duration: "30 mins", startTime: "2032-02-02T10:00:00Z", recurrence: "FREQ=DAILY;COUNT=5" };

describe.each(WIRINGS)("who one occurrence of a series concerns, end to end (%s)", async (wiring) => {
  const suite = await systemPerSuite(wiring);
  const { available } = suite;

  it.runIf(available)("someone added to one occurrence has that one in their list, day view and busy time; someone taken off one loses that one only", async () => {
    const org = await createUserWithKey(suite.url);
    const bo = await createUserWithKey(suite.url);
    const dee = await createUserWithKey(suite.url);
    const created = await call(suite.url, "POST", "/v1/meetings", { key: org.key, body: { ...SERIES, participants: [bo.email] } });
    expect(created.status).toBe(201);
    const occurrence = (day: string) => `${created.body.id as string}_203202${day}T100000Z`;
    const list = async (key: string) => ((await call(suite.url, "GET", "/v1/meetings?filter=upcoming&from=2032-02-01&to=2032-03-01", { key })).body.data as Item[]).map((i) => i.id);
    const busyOn = async (key: string, date: string) => (await call(suite.url, "GET", `/v1/availability?date=${date}`, { key })).body.slots.filter((s: { status: string }) => s.status === "busy");
    const freeBusy = async (user: { key: string; email: string }) =>
      (await call(suite.url, "POST", "/v1/availability/free-busy", { key: user.key, body: { participants: [user.email], from: "2032-02-01T00:00:00Z", to: "2032-02-08T00:00:00Z" } })).body.people[0].busy;

    // Dee is not in the series: nothing of it is hers, until the Tuesday occurrence lists her.
    expect(await list(dee.key)).toEqual([]);
    expect((await call(suite.url, "PATCH", `/v1/meetings/${occurrence("03")}`, { key: org.key, body: { participants: [bo.email, dee.email] } })).status).toBe(200);
    // Bo is taken off the Thursday occurrence only.
    expect((await call(suite.url, "PATCH", `/v1/meetings/${occurrence("05")}`, { key: org.key, body: { participants: ["someone@example.com"] } })).status).toBe(200);

    expect(await list(dee.key)).toEqual([occurrence("03")]);
    expect((await call(suite.url, "GET", `/v1/meetings/${occurrence("03")}`, { key: dee.key })).body).toMatchObject({ id: occurrence("03"), participants: [bo.email, dee.email] });
    expectError(await call(suite.url, "GET", `/v1/meetings/${occurrence("04")}`, { key: dee.key }), 404, "not_found");
    expect(await busyOn(dee.key, "2032-02-03")).toEqual([{ start: "10:00", end: "10:30", status: "busy" }]);
    expect(await busyOn(dee.key, "2032-02-04")).toEqual([]);
    expect(await freeBusy(dee)).toEqual([{ start: "2032-02-03T10:00:00Z", end: "2032-02-03T10:30:00Z" }]);

    expect(await list(bo.key)).toEqual(["02", "03", "04", "06"].map(occurrence));
    expect(await busyOn(bo.key, "2032-02-05")).toEqual([]);
    expect(await busyOn(bo.key, "2032-02-06")).toEqual([{ start: "10:00", end: "10:30", status: "busy" }]);
    expect((await freeBusy(bo)).map((b: { start: string }) => b.start)).toEqual(["2032-02-02T10:00:00Z", "2032-02-03T10:00:00Z", "2032-02-04T10:00:00Z", "2032-02-06T10:00:00Z"]);
    expectError(await call(suite.url, "GET", `/v1/meetings/${occurrence("05")}`, { key: bo.key }), 404, "not_found");

    // The organizer keeps all five; the series renamed keeps Dee's one occurrence hers.
    expect(await list(org.key)).toEqual(["02", "03", "04", "05", "06"].map(occurrence));
    expect((await call(suite.url, "PATCH", `/v1/meetings/${created.body.id as string}`, { key: org.key, body: { title: "Renamed" } })).status).toBe(200);
    expect(await list(dee.key)).toEqual([occurrence("03")]);
  });
});
