import { hashApiKey } from "@sched/ids";
import { accountsAuthenticate, accountsGetMe, accountsLookupUsers, accountsUpdateMe, callerChanged, NO_PREFERENCES, userUpdated, type Caller, type PreferencesPatch, type WorkingHoursEntry } from "@sched/proto";
import { eventually } from "@sched/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAccounts, type AccountsHarness } from "./harness.js";

const DEFAULT_HOURS = ["monday", "tuesday", "wednesday", "thursday", "friday"].map((day) => ({ day, start: "09:00", end: "17:00" }));

describe("the caller's own account (/v1/me), against Postgres", () => {
  let h: AccountsHarness;
  beforeAll(async () => {
    h = await startAccounts();
  });
  afterAll(async () => h?.stop());

  const getMe = (caller?: Caller) => h.call(accountsGetMe, { params: {}, query: {}, body: undefined }, caller);
  const patchMe = (caller: Caller, body: { name?: string; timezone?: string; workingHours?: WorkingHoursEntry[]; preferences?: PreferencesPatch }) =>
    h.call(accountsUpdateMe, { params: {}, query: {}, body }, caller);
  const patchFailure = (caller: Caller, body: unknown) => h.failure(accountsUpdateMe, { params: {}, query: {}, body } as never, caller);

  describe("reading", () => {
    it("when a new user reads his account, then 200 with his zone and the default working hours", async () => {
      const { userId, email, caller } = await h.userWithKey({ timezone: "Europe/Berlin" });
      expect(await getMe(caller)).toEqual({
        status: 200,
        body: { id: userId, email, name: "Key Holder", timezone: "Europe/Berlin", workingHours: DEFAULT_HOURS, preferences: NO_PREFERENCES },
      });
    });

    it("when there is no caller, then 401", async () => {
      const err = await h.failure(accountsGetMe, { params: {}, query: {}, body: undefined });
      expect(err).toMatchObject({ code: "unauthorized", status: 401 });
    });

    it("when the request carries a query parameter, then 400 naming it", async () => {
      const { caller } = await h.userWithKey();
      const err = await h.failure(accountsGetMe, { params: {}, query: { verbose: "1" }, body: undefined } as never, caller);
      expect(err).toMatchObject({ code: "invalid_request", status: 400 });
      expect(err.details.param).toBe("verbose");
    });
  });

  describe("updating", () => {
    it("when name, zone and hours change, then 200 with the whole updated account, kept for the next read", async () => {
      const { userId, email, caller } = await h.userWithKey();
      const workingHours: WorkingHoursEntry[] = [
        { day: "tuesday", start: "13:00", end: "18:00" },
        { day: "monday", start: "08:00", end: "12:00" },
        { day: "tuesday", start: "08:30", end: "12:00" },
      ];
      const reply = await patchMe(caller, { name: " Ann Lee ", timezone: "America/Los_Angeles", workingHours });
      const expected = {
        id: userId,
        email,
        name: "Ann Lee",
        timezone: "America/Los_Angeles",
        workingHours: [
          { day: "monday", start: "08:00", end: "12:00" },
          { day: "tuesday", start: "08:30", end: "12:00" },
          { day: "tuesday", start: "13:00", end: "18:00" },
        ],
        preferences: NO_PREFERENCES,
      };
      expect(reply).toEqual({ status: 200, body: expected });
      expect((await getMe(caller)).body).toEqual(expected);
      const row = await h.db("users").where({ id: userId }).first();
      expect(row.updated_at.getTime()).toBeGreaterThan(row.created_at.getTime());
    });

    it("when only one field is sent, then the others stay", async () => {
      const { caller } = await h.userWithKey({ timezone: "Asia/Tokyo" });
      const reply = await patchMe(caller, { name: "Only Name" });
      expect(reply.body).toMatchObject({ name: "Only Name", timezone: "Asia/Tokyo", workingHours: DEFAULT_HOURS });
    });

    it("when the working hours are emptied, then the user has none", async () => {
      const { caller } = await h.userWithKey();
      expect((await patchMe(caller, { workingHours: [] })).body).toMatchObject({ workingHours: [] });
      expect((await getMe(caller)).body).toMatchObject({ workingHours: [] });
    });

    it("when the zone changes, then the key resolves to the new zone", async () => {
      const { key, caller } = await h.userWithKey();
      await patchMe(caller, { timezone: "australia/sydney" });
      expect((await h.call(accountsAuthenticate, { keyHash: hashApiKey(key) })).caller.timezone).toBe("Australia/Sydney");
      expect((await h.call(accountsLookupUsers, { ids: [caller.userId] })).users[0]?.timezone).toBe("Australia/Sydney");
    });

    it("when a zone or working hours are sent, then gateways are told to forget the user's callers before the answer, again on a repeat, and not for other fields", async () => {
      const { key, caller } = await h.userWithKey({ timezone: "Europe/Paris" });
      const told: string[] = [];
      const listening = await h.bus.onNotice(callerChanged, ({ userId }) => void told.push(userId));
      try {
        await patchMe(caller, { timezone: "Asia/Tokyo" });
        expect(told).toEqual([caller.userId]);
        await patchMe(caller, { timezone: "Asia/Tokyo" });
        expect(told).toEqual([caller.userId, caller.userId]);
        await patchMe(caller, { name: "Renamed", preferences: { bufferMinutes: 10 } });
        expect(told).toHaveLength(2);
        const hours: WorkingHoursEntry[] = [{ day: "monday", start: "10:00", end: "12:00" }];
        await patchMe(caller, { workingHours: hours });
        expect(told).toEqual([caller.userId, caller.userId, caller.userId]);
        // The key now resolves to a caller carrying them (the day view reads them there).
        expect((await h.call(accountsAuthenticate, { keyHash: hashApiKey(key) })).caller.workingHours).toEqual(hours);
      } finally {
        await listening.stop();
      }
    });

    it.each(["UTC+2", "+02:00", "GMT-5", "Mars/Olympus", "Europe/Berlin "])("when the zone is %j, then 400 naming timezone and nothing changes", async (timezone) => {
      const { caller } = await h.userWithKey({ timezone: "Europe/Paris" });
      const err = await patchFailure(caller, { name: "Changed", timezone });
      expect(err).toMatchObject({ code: "invalid_request", status: 400 });
      expect(err.details.param).toBe("timezone");
      expect((await getMe(caller)).body).toMatchObject({ name: "Key Holder", timezone: "Europe/Paris" });
    });

    it("when two entries of one day overlap, then 400 naming the later entry and nothing changes", async () => {
      const { caller } = await h.userWithKey();
      const err = await patchFailure(caller, {
        workingHours: [
          { day: "monday", start: "09:00", end: "12:00" },
          { day: "monday", start: "11:00", end: "13:00" },
        ],
      });
      expect(err).toMatchObject({ code: "invalid_request", status: 400 });
      expect(err.details.param).toBe("workingHours[1]");
      expect(err.message).toContain("workingHours[1]");
      expect((await getMe(caller)).body).toMatchObject({ workingHours: DEFAULT_HOURS });
    });

    it("when an entry is malformed, then 400 naming the field", async () => {
      const { caller } = await h.userWithKey();
      const cases: [unknown, string][] = [
        [{ workingHours: [{ day: "monday", start: "09:00", end: "24:00" }] }, "workingHours[0].end"],
        [{ workingHours: [{ day: "monday", start: "17:00", end: "09:00" }] }, "workingHours[0].end"],
        [{ workingHours: [{ day: "monday", start: "09:00", end: "17:00" }, { day: "someday", start: "09:00", end: "17:00" }] }, "workingHours[1].day"],
        [{ workingHours: [{ day: "monday", start: "09:00", end: "17:00", lunch: true }] }, "workingHours[0].lunch"],
        [{ name: "" }, "name"],
        [{ email: "new@example.com" }, "email"],
      ];
      for (const [body, param] of cases) {
        const err = await patchFailure(caller, body);
        expect(err, param).toMatchObject({ code: "invalid_request", status: 400 });
        expect(err.details.param).toBe(param);
      }
    });

    it("when nothing is sent, then 200 with the account unchanged", async () => {
      const { caller } = await h.userWithKey();
      const before = await getMe(caller);
      expect(await patchMe(caller, {})).toEqual(before);
    });
  });

  describe("scheduling preferences", () => {
    it("when preferences are sent, then each given field replaces the stored one, days in weekday order, and an event carries them", async () => {
      const { userId, caller } = await h.userWithKey();
      const events: unknown[] = [];
      const listening = await h.bus.consume({ durable: `prefs-${userId}`, events: [userUpdated] }, async (m) => {
        if (m.payload.userId === userId) events.push(m.payload);
      });
      const first = await patchMe(caller, {
        preferences: { preferredTimes: [{ start: "09:00", end: "12:00", days: ["thursday", "tuesday"] }], avoidDays: ["friday", "monday", "friday"], bufferMinutes: 15 },
      });
      const stated = {
        preferredTimes: [{ start: "09:00", end: "12:00", days: ["tuesday", "thursday"] }],
        avoidDays: ["monday", "friday"],
        bufferMinutes: 15,
        maxMeetingsPerDay: null,
      };
      expect((first.body as { preferences: unknown }).preferences).toEqual(stated);
      const second = await patchMe(caller, { preferences: { maxMeetingsPerDay: 4, bufferMinutes: null } });
      expect((second.body as { preferences: unknown }).preferences).toEqual({ ...stated, bufferMinutes: null, maxMeetingsPerDay: 4 });
      expect(((await getMe(caller)).body as { preferences: unknown }).preferences).toEqual({ ...stated, bufferMinutes: null, maxMeetingsPerDay: 4 });
      await eventually(() => events.length === 2);
      expect(events[1]).toMatchObject({ userId, preferences: { ...stated, bufferMinutes: null, maxMeetingsPerDay: 4 } });
      await listening.stop();
    });

    it("when preferences are malformed, then 400 naming the field and nothing changes", async () => {
      const { caller } = await h.userWithKey();
      const cases: [unknown, string][] = [
        [{ preferences: { preferredTimes: [{ start: "12:00", end: "09:00" }] } }, "preferences.preferredTimes[0].end"],
        [{ preferences: { avoidDays: ["someday"] } }, "preferences.avoidDays[0]"],
        [{ preferences: { bufferMinutes: -5 } }, "preferences.bufferMinutes"],
        [{ preferences: { maxMeetingsPerDay: 0 } }, "preferences.maxMeetingsPerDay"],
        [{ preferences: { maxMeetingsPerDay: 2.5 } }, "preferences.maxMeetingsPerDay"],
        [{ preferences: { lunch: true } }, "preferences.lunch"],
        [{ preferences: { avoidDays: ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"] } }, "preferences.avoidDays"],
      ];
      for (const [body, param] of cases) {
        const err = await patchFailure(caller, body);
        expect(err, param).toMatchObject({ code: "invalid_request", status: 400 });
        expect(err.details.param).toBe(param);
      }
      expect(((await getMe(caller)).body as { preferences: unknown }).preferences).toEqual(NO_PREFERENCES);
    });
  });
});
