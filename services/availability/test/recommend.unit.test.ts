import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { DateTime } from "luxon";
import { WEEKDAYS, type WorkingHoursEntry } from "@sched/proto";
import type { Interval } from "../src/domain/intervals.js";
import { recommendSlots, TIME_RANGE_MINUTES, type CountedPerson, type RecommendInput, type TimeRange } from "../src/domain/recommend.js";
import { workingWindowsBetween } from "../src/domain/workingWindows.js";

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const utc = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString().replace(".000", "");
const WORKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday"] as const;
const nineToFive: WorkingHoursEntry[] = WORKDAYS.map((day) => ({ day, start: "09:00", end: "17:00" }));

function person(userId: string, zone: string, options: { busy?: Interval[]; workingHours?: WorkingHoursEntry[]; isCaller?: boolean } = {}): CountedPerson {
  return { userId, zone, workingHours: options.workingHours ?? nineToFive, busy: options.busy ?? [], isCaller: options.isCaller ?? false };
}

function input(partial: Partial<RecommendInput> & Pick<RecommendInput, "people" | "horizon">): RecommendInput {
  return { now: partial.horizon.start, zone: "Europe/Berlin", timeRange: "any", durationMs: 30 * MIN, limit: 10, ...partial };
}

describe("recommendSlots", () => {
  it("scores a small day by hand: working hours, buffer, soonness and the same-day factor", () => {
    // Monday 2026-03-02 in Berlin (UTC+1): works 09:00–12:00, busy 10:00–11:00; horizon 08:00–12:00.
    const alice = person("alice", "Europe/Berlin", {
      isCaller: true,
      workingHours: [{ day: "monday", start: "09:00", end: "12:00" }],
      busy: [{ start: utc("2026-03-02T09:00:00Z"), end: utc("2026-03-02T10:00:00Z") }],
    });
    const result = recommendSlots(input({ people: [alice], horizon: { start: utc("2026-03-02T07:00:00Z"), end: utc("2026-03-02T11:00:00Z") } }));
    expect(result.emptyReason).toBeUndefined();
    expect(result.slots.map((s) => [iso(s.start), iso(s.end)])).toEqual([
      ["2026-03-02T08:00:00Z", "2026-03-02T08:30:00Z"], // 09:00: 0.6 + 0.25 + 0.15 × 0.75
      ["2026-03-02T10:30:00Z", "2026-03-02T11:00:00Z"], // 11:30: (0.6 + 0.25 + 0.15 × 0.125) × 0.8
      ["2026-03-02T08:30:00Z", "2026-03-02T09:00:00Z"], // 09:30: (0.6 + 0 + 0.15 × 0.625) × 0.8²
      ["2026-03-02T10:00:00Z", "2026-03-02T10:30:00Z"], // 11:00: (0.6 + 0 + 0.15 × 0.25) × 0.8³
    ]);
    expect(result.slots[0]!.score).toBeCloseTo(0.9625, 2);
    expect(result.slots.slice(1).map((s) => s.score)).toEqual([0.695, 0.444, 0.326]);
    expect(result.slots.every((s) => s.withinWorkingHours.length === 1 && s.withinWorkingHours[0] === "alice")).toBe(true);
    expect(result.slots[0]!.reason).toBe("Today you are free, inside your working hours, at least 30 minutes from other meetings.");
    expect(result.slots[1]!.reason).toBe(
      "Today you are free, inside your working hours, at least 30 minutes from other meetings, ranked lower because 1 higher-ranked suggestion falls on the same day.",
    );
    expect(result.slots[2]!.reason).toContain("right next to another meeting");
  });

  it("prefers the hours when people in different zones all work, and says who works then", () => {
    // Monday 2026-03-02: Berlin 09–17 is 08:00–16:00Z, New York 09–17 is 14:00–22:00Z.
    const people = [person("caller", "Europe/Berlin", { isCaller: true }), person("bob", "America/New_York")];
    const result = recommendSlots(input({ people, horizon: { start: utc("2026-03-02T00:00:00Z"), end: utc("2026-03-03T00:00:00Z") }, limit: 3 }));
    const top = result.slots[0]!;
    expect(top.start).toBeGreaterThanOrEqual(utc("2026-03-02T14:00:00Z"));
    expect(top.end).toBeLessThanOrEqual(utc("2026-03-02T16:00:00Z"));
    expect(top.withinWorkingHours).toEqual(["caller", "bob"]);
    expect(top.reason).toContain("inside working hours for both people");
    for (const s of result.slots.slice(1)) {
      if (s.start < utc("2026-03-02T14:00:00Z")) {
        expect(s.withinWorkingHours).toEqual(["caller"]);
        expect(s.reason).toContain("inside working hours for 1 of 2 people");
      }
    }
  });

  it("keeps to the time-range window on the caller's clock, even outside working hours", () => {
    const people = [person("caller", "America/New_York", { isCaller: true })];
    const horizon = { start: utc("2026-03-02T05:00:00Z"), end: utc("2026-03-04T05:00:00Z") };
    for (const timeRange of ["morning", "afternoon", "evening"] as const) {
      const result = recommendSlots(input({ people, horizon, timeRange, zone: "America/New_York", limit: 50 }));
      expect(result.slots.length).toBeGreaterThan(0);
      const { from, to } = TIME_RANGE_MINUTES[timeRange];
      for (const s of result.slots) {
        const start = DateTime.fromMillis(s.start, { zone: "America/New_York" });
        const end = DateTime.fromMillis(s.end, { zone: "America/New_York" });
        expect(start.hour * 60 + start.minute).toBeGreaterThanOrEqual(from);
        expect(end.hour * 60 + end.minute).toBeLessThanOrEqual(to);
        expect(end.toISODate()).toBe(start.toISODate());
      }
      if (timeRange === "evening") expect(result.slots.every((s) => s.withinWorkingHours.length === 0)).toBe(true);
    }
  });

  it("never suggests a start in the past, and starts on the next quarter hour", () => {
    const people = [person("caller", "Europe/Berlin", { isCaller: true })];
    const now = utc("2026-03-02T10:07:00Z");
    const result = recommendSlots(input({ people, now, horizon: { start: utc("2026-03-02T00:00:00Z"), end: utc("2026-03-02T16:00:00Z") }, limit: 50 }));
    expect(Math.min(...result.slots.map((s) => s.start))).toBe(utc("2026-03-02T10:15:00Z"));
  });

  it("spreads suggestions across days rather than filling one morning", () => {
    const people = [person("caller", "Europe/Berlin", { isCaller: true })];
    const result = recommendSlots(input({ people, horizon: { start: utc("2026-03-02T00:00:00Z"), end: utc("2026-03-07T00:00:00Z") }, limit: 5 }));
    const days = result.slots.map((s) => DateTime.fromMillis(s.start, { zone: "Europe/Berlin" }).toISODate());
    expect(new Set(days).size).toBe(5);
  });

  it("returns distinct, non-overlapping times", () => {
    const people = [person("caller", "Europe/Berlin", { isCaller: true })];
    const result = recommendSlots(input({ people, durationMs: 2 * HOUR, horizon: { start: utc("2026-03-02T00:00:00Z"), end: utc("2026-03-03T00:00:00Z") }, limit: 50 }));
    const sorted = [...result.slots].sort((a, b) => a.start - b.start);
    expect(sorted.length).toBe(4);
    for (let k = 1; k < sorted.length; k++) expect(sorted[k]!.start).toBeGreaterThanOrEqual(sorted[k - 1]!.end);
  });

  it("lays the grid on the local clock across Berlin's skipped hour (2026-03-29)", () => {
    const people = [person("caller", "Europe/Berlin", { isCaller: true, workingHours: [{ day: "sunday", start: "01:00", end: "05:00" }] })];
    const result = recommendSlots(input({ people, durationMs: 15 * MIN, horizon: { start: utc("2026-03-28T23:00:00Z"), end: utc("2026-03-29T22:00:00Z") }, limit: 50 }));
    const local = result.slots.map((s) => DateTime.fromMillis(s.start, { zone: "Europe/Berlin" }).toFormat("HH:mm")).sort();
    expect(local).toEqual(["01:00", "01:15", "01:30", "01:45", "03:00", "03:15", "03:30", "03:45", "04:00", "04:15", "04:30", "04:45"]);
    // 01:30 CET + 90 minutes is 04:00 CEST: slots are real durations.
    const long = recommendSlots(input({ people, durationMs: 90 * MIN, horizon: { start: utc("2026-03-28T23:00:00Z"), end: utc("2026-03-29T22:00:00Z") }, limit: 50 }));
    for (const s of long.slots) expect(s.end - s.start).toBe(90 * MIN);
  });

  it("uses every working window of a Lord Howe day with a 30-minute shift (2026-10-04)", () => {
    const people = [person("caller", "Australia/Lord_Howe", { isCaller: true, workingHours: [{ day: "sunday", start: "01:00", end: "04:00" }] })];
    const result = recommendSlots(
      input({ people, zone: "Australia/Lord_Howe", durationMs: 30 * MIN, horizon: { start: utc("2026-10-03T13:30:00Z"), end: utc("2026-10-04T13:00:00Z") }, limit: 50 }),
    );
    // 01:00 LHST = 14:30Z to 04:00 LHDT = 17:00Z: 2.5 real hours, five half-hour slots.
    expect(result.slots.map((s) => iso(s.start)).sort()).toEqual([
      "2026-10-03T14:30:00Z",
      "2026-10-03T15:00:00Z",
      "2026-10-03T15:30:00Z",
      "2026-10-03T16:00:00Z",
      "2026-10-03T16:30:00Z",
    ]);
  });

  describe("emptyReason", () => {
    const caller = person("caller", "Europe/Berlin", { isCaller: true });

    it("is horizon_too_short when the horizon cannot hold the meeting", () => {
      expect(recommendSlots(input({ people: [caller], horizon: { start: utc("2026-03-02T09:00:00Z"), end: utc("2026-03-02T09:20:00Z") } }))).toEqual({
        slots: [],
        emptyReason: "horizon_too_short",
      });
    });

    it("is horizon_too_short when the horizon has passed", () => {
      const horizon = { start: utc("2026-03-02T09:00:00Z"), end: utc("2026-03-02T12:00:00Z") };
      expect(recommendSlots(input({ people: [caller], horizon, now: utc("2026-03-02T11:45:00Z") })).emptyReason).toBe("horizon_too_short");
    });

    it("is horizon_too_short when the horizon misses the time range", () => {
      const horizon = { start: utc("2026-03-02T12:00:00Z"), end: utc("2026-03-02T16:00:00Z") };
      expect(recommendSlots(input({ people: [caller], horizon, timeRange: "morning" })).emptyReason).toBe("horizon_too_short");
    });

    it("is outside_working_hours when the caller works at no time of the horizon", () => {
      const weekend = { start: utc("2026-03-06T23:00:00Z"), end: utc("2026-03-08T23:00:00Z") };
      expect(recommendSlots(input({ people: [caller], horizon: weekend })).emptyReason).toBe("outside_working_hours");
      const idle = person("caller", "Europe/Berlin", { isCaller: true, workingHours: [] });
      expect(recommendSlots(input({ people: [idle], horizon: weekend })).emptyReason).toBe("outside_working_hours");
    });

    it("is outside_working_hours when no working window is long enough", () => {
      const short = person("caller", "Europe/Berlin", { isCaller: true, workingHours: [{ day: "monday", start: "09:00", end: "09:20" }] });
      const horizon = { start: utc("2026-03-02T00:00:00Z"), end: utc("2026-03-03T00:00:00Z") };
      expect(recommendSlots(input({ people: [short], horizon })).emptyReason).toBe("outside_working_hours");
    });

    it("is no_common_free_time when someone is busy at every fitting start", () => {
      const horizon = { start: utc("2026-03-02T00:00:00Z"), end: utc("2026-03-03T00:00:00Z") };
      const bob = person("bob", "America/New_York", {
        busy: [
          { start: utc("2026-03-02T08:00:00Z"), end: utc("2026-03-02T12:10:00Z") },
          { start: utc("2026-03-02T12:30:00Z"), end: utc("2026-03-02T16:00:00Z") },
        ],
      });
      expect(recommendSlots(input({ people: [caller, bob], horizon }))).toEqual({ slots: [], emptyReason: "no_common_free_time" });
    });
  });

  it("refuses a call without the caller or with a non-positive duration", () => {
    const horizon = { start: 0, end: DAY };
    expect(() => recommendSlots(input({ people: [person("bob", "UTC")], horizon }))).toThrow(RangeError);
    expect(() => recommendSlots(input({ people: [person("c", "UTC", { isCaller: true })], horizon, durationMs: 0 }))).toThrow(RangeError);
  });

  it("is deterministic", () => {
    const people = [person("caller", "Europe/Berlin", { isCaller: true }), person("bob", "Asia/Kolkata", { busy: [{ start: utc("2026-03-03T09:00:00Z"), end: utc("2026-03-03T10:00:00Z") }] })];
    const i = input({ people, horizon: { start: utc("2026-03-02T00:00:00Z"), end: utc("2026-03-09T00:00:00Z") } });
    expect(recommendSlots(i)).toEqual(recommendSlots(i));
  });

  describe("properties", () => {
    const ZONES = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata", "UTC"];
    const DURATIONS = [15, 30, 45, 60, 90, 120].map((m) => m * MIN);
    const BASE = utc("2026-03-26T00:00:00Z"); // spans Berlin's and (later) Lord Howe's changes with the offsets below
    const time = (min: number, max: number) => fc.integer({ min, max }).map((m) => `${String(Math.floor(m / 60)).padStart(2, "0")}:${String(m % 60).padStart(2, "0")}`);
    const entry = fc.tuple(fc.constantFrom(...WEEKDAYS), time(0, 719), time(720, 1439)).map(([day, start, end]): WorkingHoursEntry => ({ day, start, end }));
    const busyList = fc.array(fc.tuple(fc.integer({ min: -1 * 96, max: 5 * 96 }), fc.integer({ min: 1, max: 16 })), { maxLength: 25 }).map((list) =>
      list.map(([q, length]) => ({ start: BASE + q * 15 * MIN + 7 * MIN, end: BASE + (q + length) * 15 * MIN })),
    );
    const personArb = fc.record({ zone: fc.constantFrom(...ZONES), workingHours: fc.array(entry, { maxLength: 6 }), busy: busyList });
    const scenario = fc.record({
      baseShift: fc.constantFrom(0, 190 * DAY), // late March or early October 2026
      people: fc.array(personArb, { minLength: 1, maxLength: 4 }),
      timeRange: fc.constantFrom<TimeRange>("any", "morning", "afternoon", "evening"),
      durationMs: fc.constantFrom(...DURATIONS),
      startQ: fc.integer({ min: 0, max: 2 * 96 }),
      lengthQ: fc.integer({ min: 0, max: 3 * 96 }),
      nowQ: fc.integer({ min: -96, max: 4 * 96 }),
      limit: fc.integer({ min: 1, max: 12 }),
    });

    it("every slot is on the grid, in the horizon and window, not in the past, free for every person; scores in [0, 1], sorted", () => {
      fc.assert(
        fc.property(scenario, (sc) => {
          const shift = (i: Interval) => ({ start: i.start + sc.baseShift, end: i.end + sc.baseShift });
          const people: CountedPerson[] = sc.people.map((p, k) => ({ userId: `u${k}`, zone: p.zone, workingHours: p.workingHours, busy: p.busy.map(shift), isCaller: k === 0 }));
          const caller = people[0]!;
          const horizon = { start: BASE + sc.baseShift + sc.startQ * 15 * MIN, end: BASE + sc.baseShift + (sc.startQ + sc.lengthQ) * 15 * MIN };
          const now = BASE + sc.baseShift + sc.nowQ * 15 * MIN + 3 * MIN;
          const result = recommendSlots({ now, zone: caller.zone, horizon, timeRange: sc.timeRange, durationMs: sc.durationMs, people, limit: sc.limit });

          const fits = (start: number) => {
            const end = start + sc.durationMs;
            if (start < Math.max(now, horizon.start) || end > horizon.end) return false;
            const local = DateTime.fromMillis(start, { zone: caller.zone });
            if (local.minute % 15 !== 0 || local.second !== 0 || local.millisecond !== 0) return false;
            if (sc.timeRange === "any") {
              const windows = workingWindowsBetween(start - 2 * DAY, end + 2 * DAY, caller.zone, caller.workingHours);
              if (!windows.some((w) => w.start <= start && end <= w.end)) return false;
            } else {
              const { from, to } = TIME_RANGE_MINUTES[sc.timeRange];
              const localEnd = DateTime.fromMillis(end, { zone: caller.zone });
              if (local.hour * 60 + local.minute < from || localEnd.toISODate() !== local.toISODate() || localEnd.hour * 60 + localEnd.minute > to) return false;
            }
            return people.every((p) => p.busy.every((b) => !(b.start < end && start < b.end)));
          };

          expect(result.slots.length).toBeLessThanOrEqual(sc.limit);
          for (const s of result.slots) {
            expect(s.end - s.start).toBe(sc.durationMs);
            expect(fits(s.start)).toBe(true);
            expect(s.score).toBeGreaterThanOrEqual(0);
            expect(s.score).toBeLessThanOrEqual(1);
            const inside = people
              .filter((p) => workingWindowsBetween(s.start - 2 * DAY, s.end + 2 * DAY, p.zone, p.workingHours).some((w) => w.start <= s.start && s.end <= w.end))
              .map((p) => p.userId);
            expect(s.withinWorkingHours).toEqual(inside);
            expect(s.reason).toMatch(/^[A-Z].*\.$/);
          }
          for (let k = 1; k < result.slots.length; k++) {
            const [a, b] = [result.slots[k - 1]!, result.slots[k]!];
            expect(a.score > b.score || (a.score === b.score && a.start < b.start)).toBe(true);
          }
          const byStart = [...result.slots].sort((a, b) => a.start - b.start);
          for (let k = 1; k < byStart.length; k++) expect(byStart[k]!.start).toBeGreaterThanOrEqual(byStart[k - 1]!.end);

          // Nothing is returned only when no fitting start exists at all.
          let anyFit = false;
          for (let t = Math.ceil(horizon.start / (15 * MIN)) * 15 * MIN - 15 * MIN; t <= horizon.end && !anyFit; t += 15 * MIN) anyFit = fits(t);
          expect(result.slots.length === 0).toBe(!anyFit);
          expect(result.emptyReason === undefined).toBe(result.slots.length > 0);
        }),
        { numRuns: 300 },
      );
    });

    it("with optional people, stated buffers, a minimum notice and a quorum: required people free with their buffers, the quorum reached, who is available said truly, nothing missed", () => {
      const rules = fc.record({
        optional: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
        buffers: fc.array(fc.constantFrom(0, 10, 15, 30, 60), { minLength: 4, maxLength: 4 }),
        noticeMinutes: fc.constantFrom(0, 0, 45, 240, 1440),
        minimumAttendees: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
      });
      fc.assert(
        fc.property(scenario, rules, (sc, r) => {
          const shift = (i: Interval) => ({ start: i.start + sc.baseShift, end: i.end + sc.baseShift });
          const people: CountedPerson[] = sc.people.map((p, k) => ({
            userId: `u${k}`,
            zone: p.zone,
            workingHours: p.workingHours,
            busy: p.busy.map(shift),
            isCaller: k === 0,
            optional: k > 0 && r.optional[k]!,
            bufferMs: r.buffers[k]! * MIN,
            label: `u${k}@example.com`,
          }));
          const caller = people[0]!;
          const horizon = { start: BASE + sc.baseShift + sc.startQ * 15 * MIN, end: BASE + sc.baseShift + (sc.startQ + sc.lengthQ) * 15 * MIN };
          const now = BASE + sc.baseShift + sc.nowQ * 15 * MIN + 3 * MIN;
          const noticeMs = r.noticeMinutes * MIN;
          const result = recommendSlots({
            now,
            zone: caller.zone,
            horizon,
            timeRange: sc.timeRange,
            durationMs: sc.durationMs,
            people,
            limit: sc.limit,
            minimumNoticeMs: noticeMs,
            minimumAttendees: r.minimumAttendees,
          });

          const freeWithBuffer = (p: CountedPerson, start: number) => p.busy.every((b) => !(b.start - (p.bufferMs ?? 0) < start + sc.durationMs && start < b.end + (p.bufferMs ?? 0)));
          const placed = (start: number) => {
            const end = start + sc.durationMs;
            if (start < Math.max(now + noticeMs, horizon.start) || end > horizon.end) return false;
            const local = DateTime.fromMillis(start, { zone: caller.zone });
            if (local.minute % 15 !== 0 || local.second !== 0 || local.millisecond !== 0) return false;
            if (sc.timeRange === "any") return workingWindowsBetween(start - 2 * DAY, end + 2 * DAY, caller.zone, caller.workingHours).some((w) => w.start <= start && end <= w.end);
            const { from, to } = TIME_RANGE_MINUTES[sc.timeRange];
            const localEnd = DateTime.fromMillis(end, { zone: caller.zone });
            return local.hour * 60 + local.minute >= from && localEnd.toISODate() === local.toISODate() && localEnd.hour * 60 + localEnd.minute <= to;
          };
          const attending = (start: number) => people.filter((p) => freeWithBuffer(p, start));
          const fits = (start: number) =>
            placed(start) && people.every((p) => p.optional || freeWithBuffer(p, start)) && (r.minimumAttendees === undefined || attending(start).length >= r.minimumAttendees);

          for (const s of result.slots) {
            expect(fits(s.start)).toBe(true);
            const free = attending(s.start).map((p) => p.userId);
            if (free.length === people.length) expect(s.availableParticipants).toBeUndefined();
            else expect(s.availableParticipants).toEqual(free);
            expect(s.score).toBeGreaterThanOrEqual(0);
            expect(s.score).toBeLessThanOrEqual(1);
            const optional = people.filter((p) => p.optional);
            if (optional.length > 0) expect(s.reason).toContain("Optional:");
            for (const p of optional) expect(s.reason).toContain(p.label!);
          }
          let anyFit = false;
          for (let t = Math.ceil(horizon.start / (15 * MIN)) * 15 * MIN - 15 * MIN; t <= horizon.end && !anyFit; t += 15 * MIN) anyFit = fits(t);
          expect(result.slots.length === 0).toBe(!anyFit);
          expect(result.emptyReason === undefined).toBe(result.slots.length > 0);
        }),
        { numRuns: 300 },
      );
    });
  });

  describe("scheduling rules", () => {
    const monday = { start: utc("2026-03-02T08:00:00Z"), end: utc("2026-03-02T16:00:00Z") }; // Berlin 09:00–17:00
    const busyAt = (from: string, to: string): Interval => ({ start: utc(from), end: utc(to) });

    it("keeps a person's stated buffer free around their meetings, and says when buffers emptied the result", () => {
      const caller = { ...person("me", "Europe/Berlin", { isCaller: true, busy: [busyAt("2026-03-02T10:00:00Z", "2026-03-02T11:00:00Z")] }), bufferMs: 30 * MIN };
      const result = recommendSlots(input({ people: [caller], horizon: monday, durationMs: 60 * MIN, limit: 50 }));
      for (const s of result.slots) expect(s.end <= utc("2026-03-02T09:30:00Z") || s.start >= utc("2026-03-02T11:30:00Z")).toBe(true);
      expect(result.slots.length).toBeGreaterThan(0);

      const tight = { start: utc("2026-03-02T09:00:00Z"), end: utc("2026-03-02T12:00:00Z") };
      expect(recommendSlots(input({ people: [caller], horizon: tight, durationMs: 60 * MIN })).emptyReason).toBe("buffers");
      expect(recommendSlots(input({ people: [{ ...caller, bufferMs: 0 }], horizon: tight, durationMs: 60 * MIN })).slots.length).toBeGreaterThan(0);
    });

    it("starts no sooner than the minimum notice, and says when the notice emptied the result", () => {
      const me = person("me", "Europe/Berlin", { isCaller: true });
      const now = utc("2026-03-02T08:05:00Z");
      const result = recommendSlots(input({ people: [me], horizon: monday, now, minimumNoticeMs: 120 * MIN, limit: 50 }));
      expect(Math.min(...result.slots.map((s) => s.start))).toBe(utc("2026-03-02T10:15:00Z"));
      expect(recommendSlots(input({ people: [me], horizon: monday, now, minimumNoticeMs: 8 * 60 * MIN })).emptyReason).toBe("minimum_notice");
      expect(recommendSlots(input({ people: [me], horizon: { start: monday.start, end: monday.start + 10 * MIN } })).emptyReason).toBe("horizon_too_short");
    });

    it("counts optional people when free, names them, prefers times they can come, and honours the quorum", () => {
      const me = person("me", "Europe/Berlin", { isCaller: true });
      const bo = { ...person("bo", "Europe/Berlin", { busy: [busyAt("2026-03-02T08:00:00Z", "2026-03-02T12:00:00Z")] }), optional: true, label: "bo@example.com" };
      const cy = { ...person("cy", "Europe/Berlin", { busy: [busyAt("2026-03-02T08:00:00Z", "2026-03-02T16:00:00Z")] }), optional: true, label: "cy@example.com" };
      const result = recommendSlots(input({ people: [me, bo, cy], horizon: monday, durationMs: 60 * MIN, limit: 50 }));
      const top = result.slots[0]!;
      expect(top.start).toBeGreaterThanOrEqual(utc("2026-03-02T12:00:00Z"));
      expect(top.availableParticipants).toEqual(["me", "bo"]);
      expect(top.reason).toContain("Optional: bo@example.com can come; cy@example.com cannot.");
      const morning = result.slots.find((s) => s.end <= utc("2026-03-02T12:00:00Z"))!;
      expect(morning.availableParticipants).toEqual(["me"]);
      expect(morning.reason).toContain("Optional: none can come; bo@example.com, cy@example.com cannot.");
      expect(morning.score).toBeLessThan(top.score);

      const quorum = recommendSlots(input({ people: [me, bo, cy], horizon: monday, durationMs: 60 * MIN, limit: 50, minimumAttendees: 2 }));
      expect(quorum.slots.length).toBeGreaterThan(0);
      for (const s of quorum.slots) expect(s.start).toBeGreaterThanOrEqual(utc("2026-03-02T12:00:00Z"));
      expect(recommendSlots(input({ people: [me, bo, cy], horizon: monday, durationMs: 60 * MIN, minimumAttendees: 3 })).emptyReason).toBe("minimum_attendees");
    });

    it("keeps a buffer across Berlin's skipped hour (2026-03-29), on the local grid", () => {
      const sunday: WorkingHoursEntry[] = [{ day: "sunday", start: "00:00", end: "06:00" }];
      // 01:00–01:30 CET is 00:00–00:30Z; with a 60-minute buffer the caller is blocked until 01:30Z, which is 03:30 CEST.
      const me = { ...person("me", "Europe/Berlin", { isCaller: true, workingHours: sunday, busy: [busyAt("2026-03-29T00:00:00Z", "2026-03-29T00:30:00Z")] }), bufferMs: 60 * MIN };
      const result = recommendSlots(input({ people: [me], horizon: { start: utc("2026-03-28T23:00:00Z"), end: utc("2026-03-29T04:00:00Z") }, limit: 50 }));
      expect(Math.min(...result.slots.filter((s) => s.start > utc("2026-03-29T00:00:00Z")).map((s) => s.start))).toBe(utc("2026-03-29T01:30:00Z"));
      for (const s of result.slots) {
        expect(s.end <= utc("2026-03-28T23:00:00Z") || s.start >= utc("2026-03-29T01:30:00Z")).toBe(true);
        expect(DateTime.fromMillis(s.start, { zone: "Europe/Berlin" }).minute % 15).toBe(0);
      }
    });
  });
});
