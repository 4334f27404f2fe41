import { bind, type Stoppable } from "@sched/bus";
import { DayViewBody, accountsLookupUsers, invitesCalendarBusy, meetingsBusy } from "@sched/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorld, weekdays, type World } from "./harness.js";

const free = (start: string, end: string) => ({ start, end, status: "free" });
const busy = (start: string, end: string) => ({ start, end, status: "busy" });

describe("GET /v1/availability (day view) with the real contacts and meetings services", () => {
  let w: World;
  let invites: Stoppable | undefined;
  beforeAll(async () => {
    w = await startWorld();
    // Nobody here connected a calendar: the calendar service answers so, and every day is complete.
    invites = await w.bus.serve({ name: "invites-double", version: "0.0.0" }, [bind(invitesCalendarBusy, async () => ({ busy: [], complete: true }))]);
  });
  afterAll(async () => {
    await invites?.stop();
    await w?.close();
  });

  describe("the caller's own day", () => {
    it("shows meetings organized and attended, merged where they overlap or touch, and nothing else", async () => {
      const alice = await w.user({ name: "Alice", timezone: "Europe/Berlin" });
      const bob = await w.user({ name: "Bob" });
      // Monday 2030-03-04, Berlin is UTC+1. Alice works 09:00–17:00.
      await w.meeting(alice, { startTime: "2030-03-04T07:30:00Z", duration: "1 hour" }); // 08:30–09:30, cut at 09:00
      await w.meeting(alice, { startTime: "2030-03-04T10:00:00", duration: "1 hour" }); // no offset: Alice's zone, 10:00–11:00
      await w.meeting(bob, { startTime: "2030-03-04T09:30:00Z", duration: "1 hour", participants: [alice.email.toUpperCase()] }); // 10:30–11:30
      await w.meeting(bob, { startTime: "2030-03-04T13:00:00Z", duration: "30 mins", participants: [alice.email] }); // 14:00–14:30
      await w.meeting(alice, { startTime: "2030-03-04T13:30:00Z", duration: "30 mins" }); // 14:30–15:00, touches the one before
      await w.meeting(alice, { startTime: "2030-03-04T15:00:00Z", duration: "30 mins", status: "draft" }); // drafts are not busy
      await w.cancel(alice, await w.meeting(alice, { startTime: "2030-03-04T11:00:00Z", duration: "30 mins" })); // nor cancelled ones
      await w.meeting(bob, { startTime: "2030-03-04T11:30:00Z", duration: "30 mins" }); // Bob's alone
      await w.meeting(alice, { startTime: "2030-03-04T14:30:00Z", duration: "30 mins", mode: "live" }); // live data is another world

      const answer = await w.day(w.callerFor(alice), { date: "2030-03-04" });
      expect(answer.status).toBe(200);
      expect(DayViewBody.parse(answer.body)).toEqual(answer.body);
      expect(answer.body).toEqual({
        date: "2030-03-04",
        timezone: "Europe/Berlin",
        slots: [busy("09:00", "09:30"), free("09:30", "10:00"), busy("10:00", "11:30"), free("11:30", "14:00"), busy("14:00", "15:00"), free("15:00", "17:00")],
      });

      const live = await w.day(w.callerFor(alice, "live"), { date: "2030-03-04" });
      expect(live.body.slots).toEqual([free("09:00", "15:30"), busy("15:30", "16:00"), free("16:00", "17:00")]);
    });

    it("tiles every working window exactly, alternating free and busy, with the gap between two windows in no slot", async () => {
      const hours = [...weekdays("08:00", "12:00"), ...weekdays("13:00", "18:30")];
      const carl = await w.user({ name: "Carl", timezone: "Asia/Kolkata", workingHours: hours });
      // Kolkata is UTC+5:30: 03:00Z is 08:30, 06:15Z is 11:45, 07:45Z is 13:15.
      await w.meeting(carl, { startTime: "2030-03-05T03:00:00Z", duration: "45 mins" });
      await w.meeting(carl, { startTime: "2030-03-05T06:15:00Z", duration: "1 hour" }); // 11:45–12:45, across the lunch gap
      await w.meeting(carl, { startTime: "2030-03-05T07:45:00Z", duration: "1.5 hours" });
      await w.meeting(carl, { startTime: "2030-03-05T12:30:00Z", duration: "2 hours" }); // 18:00–20:00, past the end
      const answer = await w.day(w.callerFor(carl), { date: "2030-03-05" });
      expect(answer.body).toEqual({
        date: "2030-03-05",
        timezone: "Asia/Kolkata",
        slots: [
          free("08:00", "08:30"),
          busy("08:30", "09:15"),
          free("09:15", "11:45"),
          busy("11:45", "12:00"),
          free("13:00", "13:15"),
          busy("13:15", "14:45"),
          free("14:45", "18:00"),
          busy("18:00", "18:30"),
        ],
      });
    });

    it("is an empty list on a day without working hours", async () => {
      const dora = await w.user({ name: "Dora" });
      await w.meeting(dora, { startTime: "2030-03-09T10:00:00Z", duration: "1 hour" });
      const answer = await w.day(w.callerFor(dora), { date: "2030-03-09" }); // a Saturday
      expect(answer).toEqual({ status: 200, body: { date: "2030-03-09", timezone: "Europe/Berlin", slots: [] } });
    });

    it("takes the zone and working hours the caller carries without asking accounts, and asks accounts for a caller without them", async () => {
      const fay = await w.user({ name: "Fay", timezone: "Asia/Kolkata", workingHours: weekdays("10:00", "12:00") });
      await w.meeting(fay, { startTime: "2030-03-04T05:00:00Z", duration: "30 mins" }); // 10:30–11:00 in Kolkata
      const expected = { date: "2030-03-04", timezone: "Asia/Kolkata", slots: [free("10:00", "10:30"), busy("10:30", "11:00"), free("11:00", "12:00")] };
      w.asked.length = 0;
      expect((await w.day({ ...w.callerFor(fay), workingHours: fay.workingHours }, { date: "2030-03-04" })).body).toEqual(expected);
      expect(w.asked).not.toContain(accountsLookupUsers.subject);
      expect(w.asked).toContain(meetingsBusy.subject);
      // What the caller carries is what the view shows (the gateway drops it when either changes).
      expect((await w.day({ ...w.callerFor(fay), workingHours: weekdays("11:00", "12:00") }, { date: "2030-03-04" })).body.slots).toEqual([free("11:00", "12:00")]);
      w.asked.length = 0;
      expect((await w.day(w.callerFor(fay), { date: "2030-03-04" })).body).toEqual(expected);
      expect(w.asked).toContain(accountsLookupUsers.subject);
    });

    it("is all free when there is no meeting", async () => {
      const erik = await w.user({ name: "Erik", timezone: "America/New_York" });
      const answer = await w.day(w.callerFor(erik), { date: "2030-03-04" });
      expect(answer.body).toEqual({ date: "2030-03-04", timezone: "America/New_York", slots: [free("09:00", "17:00")] });
    });
  });

  describe("days on which the clocks change", () => {
    it("Europe/Berlin, 2026-03-29 (02:00 CET → 03:00 CEST, a 23-hour day): 01:00–05:00 is three real hours", async () => {
      const user = await w.user({ timezone: "Europe/Berlin", workingHours: [{ day: "sunday", start: "01:00", end: "05:00" }] });
      await w.meeting(user, { startTime: "2026-03-29T01:30:00Z", duration: "30 mins" }); // 03:30–04:00 CEST
      await w.meeting(user, { startTime: "2026-03-29T00:15:00Z", duration: "15 mins" }); // 01:15–01:30 CET
      const answer = await w.day(w.callerFor(user), { date: "2026-03-29" });
      expect(answer.body.slots).toEqual([free("01:00", "01:15"), busy("01:15", "01:30"), free("01:30", "03:30"), busy("03:30", "04:00"), free("04:00", "05:00")]);
    });

    it("America/New_York, 2026-11-01 (02:00 EDT → 01:00 EST, a 25-hour day): a meeting inside the repeated hour", async () => {
      const user = await w.user({ timezone: "America/New_York", workingHours: [{ day: "sunday", start: "00:00", end: "04:00" }] });
      // 05:30Z is 01:30 EDT; an hour later it is 01:30 again, now EST.
      await w.meeting(user, { startTime: "2026-11-01T05:30:00Z", duration: "1 hour" });
      const answer = await w.day(w.callerFor(user), { date: "2026-11-01" });
      expect(answer.body).toEqual({
        date: "2026-11-01",
        timezone: "America/New_York",
        slots: [free("00:00", "01:30"), busy("01:30", "01:30"), free("01:30", "04:00")],
      });
    });

    it("Australia/Lord_Howe, 2026-10-04 (02:00 → 02:30, a 30-minute shift)", async () => {
      const user = await w.user({ timezone: "Australia/Lord_Howe", workingHours: [{ day: "sunday", start: "01:00", end: "04:00" }] });
      await w.meeting(user, { startTime: "2026-10-03T15:30:00Z", duration: "30 mins" }); // 02:30–03:00 (+11:00)
      const answer = await w.day(w.callerFor(user), { date: "2026-10-04" });
      expect(answer.body.slots).toEqual([free("01:00", "02:30"), busy("02:30", "03:00"), free("03:00", "04:00")]);
    });
  });

  describe("the date", () => {
    it("reads relative dates on the user's clock, not the server's", async () => {
      const berlin = await w.user({ timezone: "Europe/Berlin" });
      const utc = await w.user({ timezone: "UTC" });
      // Saturday 23:30 UTC is already Sunday 00:30 in Berlin.
      w.now = Date.parse("2026-03-28T23:30:00Z");
      const dateOf = async (user: typeof berlin, date: string) => {
        const answer = await w.day(w.callerFor(user), { date });
        expect(answer.status).toBe(200);
        return answer.body.date as string;
      };
      expect(await dateOf(berlin, "today")).toBe("2026-03-29");
      expect(await dateOf(utc, "today")).toBe("2026-03-28");
      expect(await dateOf(berlin, "Tomorrow")).toBe("2026-03-30");
      expect(await dateOf(berlin, "yesterday")).toBe("2026-03-28");
      expect(await dateOf(berlin, "monday")).toBe("2026-03-30");
      expect(await dateOf(berlin, "this sunday")).toBe("2026-03-29");
      expect(await dateOf(berlin, "next Sunday")).toBe("2026-04-05");
      expect(await dateOf(berlin, "in 3 days")).toBe("2026-04-01");
      expect(await dateOf(berlin, "2026-04-10")).toBe("2026-04-10");
      w.now = Date.now();
    });

    it.each([
      ["an impossible date", "2026-02-30"],
      ["a month 13", "2026-13-01"],
      ["words that are no date", "someday"],
      ["a time of day", "tomorrow 3pm"],
      ["an empty value", ""],
      ["a lenient format", "03/04/2026"],
    ])("refuses %s with 400 naming date", async (_what, date) => {
      const answer = await w.day(w.callerFor(await w.user()), { date });
      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatchObject({ code: "invalid_request", param: "date" });
      expect(answer.body.error.message).toMatch(/date/);
    });

    it("validates the query strictly", async () => {
      const caller = w.callerFor(await w.user());
      const param = async (query: Record<string, unknown>) => {
        const answer = await w.day(caller, query);
        expect(answer.status).toBe(400);
        expect(answer.body.error.code).toBe("invalid_request");
        return answer.body.error.param as string;
      };
      expect(await param({})).toBe("date");
      expect(await param({ date: ["today", "tomorrow"] })).toBe("date");
      expect(await param({ date: "today", when: "now" })).toBe("when");
      expect(await param({ date: "today", email: "not-an-address" })).toBe("email");
    });

    it("refuses a request without an authenticated caller", async () => {
      const answer = await w.day(undefined, { date: "today" });
      expect(answer).toMatchObject({ status: 401, body: { error: { code: "unauthorized" } } });
    });
  });

  describe("email= (another user's day)", () => {
    it("shows the day of someone who lists the caller, in their zone, with the date read in their zone", async () => {
      const alice = await w.user({ name: "Alice", timezone: "Europe/Berlin" });
      const bob = await w.user({ name: "Bob", timezone: "Asia/Kolkata" });
      await w.contact(bob, alice);
      // Tuesday 2026-03-03 in Kolkata (UTC+5:30): 10:30–11:15.
      await w.meeting(bob, { startTime: "2026-03-03T05:00:00Z", duration: "45 mins" });
      // Monday 21:00 in Berlin is already Tuesday 01:30 in Kolkata.
      w.now = Date.parse("2026-03-02T20:00:00Z");
      try {
        const answer = await w.day(w.callerFor(alice), { date: "today", email: ` ${bob.email.toUpperCase()} ` });
        expect(answer).toEqual({
          status: 200,
          body: { date: "2026-03-03", timezone: "Asia/Kolkata", slots: [free("09:00", "10:30"), busy("10:30", "11:15"), free("11:15", "17:00")] },
        });
        expect((await w.day(w.callerFor(alice), { date: "today" })).body.date).toBe("2026-03-02");
      } finally {
        w.now = Date.now();
      }
    });

    it("is the caller's own day for the caller's own e-mail", async () => {
      const alice = await w.user({ timezone: "America/New_York" });
      const answer = await w.day(w.callerFor(alice), { date: "2030-03-04", email: alice.email });
      expect(answer.body).toEqual({ date: "2030-03-04", timezone: "America/New_York", slots: [free("09:00", "17:00")] });
    });

    it("is 404 unless the other lists the caller and neither side has blocked the other", async () => {
      const alice = await w.user({ name: "Alice" });
      const onlyMine = await w.user(); // Alice lists them; they do not list Alice
      const theyBlocked = await w.user(); // lists Alice, blocked
      const iBlocked = await w.user(); // lists Alice; Alice lists them blocked
      const liveOnly = await w.user(); // lists Alice in live mode only
      await w.contact(alice, onlyMine);
      await w.contact(theyBlocked, alice, { blocked: true });
      await w.contact(iBlocked, alice);
      await w.contact(alice, iBlocked, { blocked: true });
      await w.contact(liveOnly, alice, { mode: "live" });

      const caller = w.callerFor(alice);
      for (const email of [onlyMine.email, theyBlocked.email, iBlocked.email, liveOnly.email, "nobody-has-this@example.com"]) {
        const answer = await w.day(caller, { date: "2030-03-04", email });
        expect(answer.status).toBe(404);
        expect(answer.body.error).toMatchObject({ code: "not_found", message: "No such user." });
      }
      expect((await w.day(w.callerFor(alice, "live"), { date: "2030-03-04", email: liveOnly.email })).status).toBe(200);
    });

    it("refuses a bad date with 400 before telling whether the user exists", async () => {
      const alice = await w.user();
      const answer = await w.day(w.callerFor(alice), { date: "2026-02-30", email: "nobody-has-this@example.com" });
      expect(answer.status).toBe(400);
      expect(answer.body.error.param).toBe("date");
    });
  });
});
