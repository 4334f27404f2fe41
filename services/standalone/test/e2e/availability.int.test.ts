import { DateTime } from "luxon";
import { describe, expect, it } from "vitest";
import { call, createUserWithKey, expectError, systemPerSuite, WIRINGS } from "../harness.js";

/** The next Wednesday (at least two days ahead) in a zone, as a local ISO date. */
function nextWednesday(zone: string): string {
  let d = DateTime.now().setZone(zone).plus({ days: 2 }).startOf("day");
  while (d.weekday !== 3) d = d.plus({ days: 1 });
  return d.toISODate()!;
}

describe.each(WIRINGS)("availability end to end (%s)", async (wiring) => {
  const suite = await systemPerSuite(wiring);
  const { available } = suite;

  it.runIf(available)("shows a day as free and busy slots in the user's zone, counting attended meetings", async () => {
    const ana = await createUserWithKey(suite.url, { timezone: "America/New_York" });
    const bo = await createUserWithKey(suite.url, { timezone: "Europe/Berlin" });
    const day = nextWednesday("America/New_York");
    await call(suite.url, "POST", "/v1/meetings", { key: ana.key, body: { title: "Own", duration: "1 hour", startTime: `${day}T10:00:00`, participants: ["z@example.com"] } });
    await call(suite.url, "POST", "/v1/meetings", { key: bo.key, body: { title: "Invited", duration: "30 mins", startTime: `${day}T14:00:00-05:00`, participants: [ana.email] } });
    const view = await call(suite.url, "GET", `/v1/availability?date=${day}`, { key: ana.key });
    expect(view.status).toBe(200);
    const offset = DateTime.fromISO(day, { zone: "America/New_York" }).offset === -300 ? "" : "dst";
    expect(view.body.date).toBe(day);
    expect(view.body.timezone).toBe("America/New_York");
    const invitedLocal = offset === "" ? ["14:00", "14:30"] : ["15:00", "15:30"];
    expect(view.body.slots).toEqual([
      { start: "09:00", end: "10:00", status: "free" },
      { start: "10:00", end: "11:00", status: "busy" },
      { start: "11:00", end: invitedLocal[0], status: "free" },
      { start: invitedLocal[0], end: invitedLocal[1], status: "busy" },
      { start: invitedLocal[1], end: "17:00", status: "free" },
    ]);
    const tomorrow = await call(suite.url, "GET", "/v1/availability?date=tomorrow", { key: ana.key });
    expect(tomorrow.status).toBe(200);
    expect(tomorrow.body.date).toBe(DateTime.now().setZone("America/New_York").plus({ days: 1 }).toISODate());
    const bad = await call(suite.url, "GET", "/v1/availability?date=2026-02-30", { key: ana.key });
    expectError(bad, 400, "invalid_request");
    expect(bad.body.error.param).toBe("date");
  });

  it.runIf(available)("recommends times only around people who share visibility", async () => {
    const ana = await createUserWithKey(suite.url, { timezone: "UTC" });
    const friend = await createUserWithKey(suite.url, { timezone: "UTC" });
    const stranger = await createUserWithKey(suite.url, { timezone: "UTC" });
    expect((await call(suite.url, "POST", "/v1/contacts", { key: ana.key, body: { email: friend.email } })).status).toBe(201);
    const day = nextWednesday("UTC");
    await call(suite.url, "POST", "/v1/meetings", { key: friend.key, body: { title: "Busy", duration: "2 hours", startTime: `${day}T09:00:00Z`, participants: ["q@example.com"] } });
    await call(suite.url, "POST", "/v1/meetings", { key: stranger.key, body: { title: "Hidden", duration: "2 hours", startTime: `${day}T13:00:00Z`, participants: ["q@example.com"] } });

    const res = await call(suite.url, "POST", "/v1/availability/recommended", {
      key: ana.key,
      body: { participants: [friend.email, stranger.email, "nobody@example.com"], duration: "1 hour", from: day, to: day, limit: 50 },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-ratelimit-limit")).toBe("10");
    expect(res.body.consideredParticipants).toEqual([friend.email]);
    expect(res.body.rankedBy).toBe("heuristic");
    expect(res.body.slots.length).toBeGreaterThan(0);
    for (const slot of res.body.slots) {
      expect(slot.start >= `${day}T11:00:00Z` || slot.end <= `${day}T09:00:00Z`).toBe(true);
      expect(slot.score).toBeGreaterThanOrEqual(0);
      expect(slot.score).toBeLessThanOrEqual(1);
      expect(typeof slot.reason).toBe("string");
    }
    // The stranger's 13:00–15:00 meeting is not theirs to show: slots may overlap it.
    expect(res.body.slots.some((s: { start: string; end: string }) => s.start < `${day}T15:00:00Z` && s.end > `${day}T13:00:00Z`)).toBe(true);
    const scores = res.body.slots.map((s: { score: number }) => s.score);
    expect(scores).toEqual([...scores].sort((a: number, b: number) => b - a));

    const tooLong = await call(suite.url, "POST", "/v1/availability/recommended", { key: ana.key, body: { participants: [friend.email], duration: "1 hour", from: "2030-01-01", to: "2030-03-01" } });
    expectError(tooLong, 400, "invalid_request");
  });

  it.runIf(available)("shows another user's day only when they trust the caller", async () => {
    const viewer = await createUserWithKey(suite.url);
    const owner = await createUserWithKey(suite.url, { timezone: "Asia/Kolkata" });
    const day = nextWednesday("Asia/Kolkata");
    expectError(await call(suite.url, "GET", `/v1/availability?date=${day}&email=${owner.email}`, { key: viewer.key }), 404, "not_found");
    const added = await call(suite.url, "POST", "/v1/contacts", { key: owner.key, body: { email: viewer.email } });
    const seen = await call(suite.url, "GET", `/v1/availability?date=${day}&email=${owner.email}`, { key: viewer.key });
    expect(seen.status).toBe(200);
    expect(seen.body.timezone).toBe("Asia/Kolkata");
    await call(suite.url, "PATCH", `/v1/contacts/${added.body.id}`, { key: owner.key, body: { blocked: true } });
    expectError(await call(suite.url, "GET", `/v1/availability?date=${day}&email=${owner.email}`, { key: viewer.key }), 404, "not_found");
  });
});
