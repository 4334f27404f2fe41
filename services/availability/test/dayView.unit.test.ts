import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { DateTime } from "luxon";
import { WEEKDAYS, type WorkingHoursEntry } from "@sched/proto";
import { addDays, ZoneClock } from "@sched/time";
import { dayPieces, dayView, localClockTime, type DaySlot } from "../src/domain/dayView.js";
import { merge, type Interval } from "../src/domain/intervals.js";
import { workingWindowsOn } from "../src/domain/workingWindows.js";

const utc = (iso: string) => Date.parse(iso);
const busyUtc = (from: string, to: string): Interval => ({ start: utc(from), end: utc(to) });
const slot = (start: string, end: string, status: DaySlot["status"]): DaySlot => ({ start, end, status });
const sunday = (start: string, end: string): WorkingHoursEntry => ({ day: "sunday", start, end });
const monday = (start: string, end: string): WorkingHoursEntry => ({ day: "monday", start, end });

function slotsOf(localDate: string, zone: string, workingHours: WorkingHoursEntry[], busy: Interval[] = []) {
  const view = dayView({ localDate, zone, workingHours, busy });
  expect(view.date).toBe(localDate);
  expect(view.timezone).toBe(zone);
  return view.slots;
}

describe("dayView", () => {
  it("has no slots on a day without working hours", () => {
    expect(slotsOf("2026-03-07", "Europe/Berlin", [monday("09:00", "17:00")], [busyUtc("2026-03-07T09:00:00Z", "2026-03-07T10:00:00Z")])).toEqual([]);
  });

  it("is one free slot when nothing is busy", () => {
    expect(slotsOf("2026-03-09", "Asia/Kolkata", [monday("09:00", "17:00")])).toEqual([slot("09:00", "17:00", "free")]);
  });

  it("merges adjacent busy time and cuts busy time at the window's edges (Asia/Kolkata, +05:30)", () => {
    const busy = [
      busyUtc("2026-03-09T06:00:00Z", "2026-03-09T06:30:00Z"),
      busyUtc("2026-03-09T05:00:00Z", "2026-03-09T06:00:00Z"),
      busyUtc("2026-03-09T10:00:00Z", "2026-03-09T12:00:00Z"),
      busyUtc("2026-03-09T01:00:00Z", "2026-03-09T02:00:00Z"),
    ];
    expect(slotsOf("2026-03-09", "Asia/Kolkata", [monday("09:00", "17:00")], busy)).toEqual([
      slot("09:00", "10:30", "free"),
      slot("10:30", "12:00", "busy"),
      slot("12:00", "15:30", "free"),
      slot("15:30", "17:00", "busy"),
    ]);
  });

  it("tiles each working-hours entry; the gap between entries belongs to no slot", () => {
    const busy = [busyUtc("2026-03-09T06:00:00Z", "2026-03-09T08:00:00Z")];
    expect(slotsOf("2026-03-09", "Asia/Kolkata", [monday("13:00", "17:00"), monday("09:00", "12:00")], busy)).toEqual([
      slot("09:00", "11:30", "free"),
      slot("11:30", "12:00", "busy"),
      slot("13:00", "13:30", "busy"),
      slot("13:30", "17:00", "free"),
    ]);
  });

  it("widens busy time to whole minutes", () => {
    const busy = [busyUtc("2026-03-09T04:00:30Z", "2026-03-09T04:10:10Z")];
    expect(slotsOf("2026-03-09", "Asia/Kolkata", [monday("09:00", "17:00")], busy)).toEqual([
      slot("09:00", "09:30", "free"),
      slot("09:30", "09:41", "busy"),
      slot("09:41", "17:00", "free"),
    ]);
  });

  describe("Europe/Berlin, spring forward on 2026-03-29", () => {
    it("a window across the skipped hour, busy after it", () => {
      const busy = [busyUtc("2026-03-29T01:30:00Z", "2026-03-29T02:00:00Z")];
      expect(slotsOf("2026-03-29", "Europe/Berlin", [sunday("01:00", "05:00")], busy)).toEqual([
        slot("01:00", "03:30", "free"),
        slot("03:30", "04:00", "busy"),
        slot("04:00", "05:00", "free"),
      ]);
    });
    it("a meeting across the skipped hour", () => {
      const busy = [busyUtc("2026-03-29T00:30:00Z", "2026-03-29T01:15:00Z")];
      expect(slotsOf("2026-03-29", "Europe/Berlin", [sunday("01:00", "05:00")], busy)).toEqual([
        slot("01:00", "01:30", "free"),
        slot("01:30", "03:15", "busy"),
        slot("03:15", "05:00", "free"),
      ]);
    });
    it("a window starting in the skipped hour starts an hour later", () => {
      expect(slotsOf("2026-03-29", "Europe/Berlin", [sunday("02:30", "06:00")])).toEqual([slot("03:30", "06:00", "free")]);
    });
    it("a window lying in the skipped hour disappears", () => {
      expect(slotsOf("2026-03-29", "Europe/Berlin", [sunday("02:30", "03:15")])).toEqual([]);
    });
  });

  describe("Europe/Berlin, fall back on 2026-10-25", () => {
    it("a meeting filling the repeated hour shows the same time at both ends", () => {
      const busy = [busyUtc("2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z")];
      expect(slotsOf("2026-10-25", "Europe/Berlin", [sunday("01:00", "05:00")], busy)).toEqual([
        slot("01:00", "02:30", "free"),
        slot("02:30", "02:30", "busy"),
        slot("02:30", "05:00", "free"),
      ]);
    });
    it("a window starting in the repeated hour starts at its first occurrence", () => {
      const busy = [busyUtc("2026-10-25T01:00:00Z", "2026-10-25T01:15:00Z")];
      expect(slotsOf("2026-10-25", "Europe/Berlin", [sunday("02:30", "04:00")], busy)).toEqual([
        slot("02:30", "02:00", "free"),
        slot("02:00", "02:15", "busy"),
        slot("02:15", "04:00", "free"),
      ]);
    });
  });

  describe("America/New_York", () => {
    it("2026-03-08: a meeting across the skipped hour", () => {
      const busy = [busyUtc("2026-03-08T06:30:00Z", "2026-03-08T07:30:00Z")];
      expect(slotsOf("2026-03-08", "America/New_York", [sunday("00:00", "06:00")], busy)).toEqual([
        slot("00:00", "01:30", "free"),
        slot("01:30", "03:30", "busy"),
        slot("03:30", "06:00", "free"),
      ]);
    });
    it("2026-03-08: a window starting in the skipped hour", () => {
      expect(slotsOf("2026-03-08", "America/New_York", [sunday("02:15", "04:00")])).toEqual([slot("03:15", "04:00", "free")]);
    });
    it("2026-11-01: a window from the first 01:30, busy in the second 01:00–01:45", () => {
      const busy = [busyUtc("2026-11-01T06:00:00Z", "2026-11-01T06:45:00Z")];
      expect(slotsOf("2026-11-01", "America/New_York", [sunday("01:30", "03:00")], busy)).toEqual([
        slot("01:30", "01:00", "free"),
        slot("01:00", "01:45", "busy"),
        slot("01:45", "03:00", "free"),
      ]);
    });
  });

  describe("Australia/Lord_Howe (30-minute shift)", () => {
    it("2026-10-04: a meeting across the skipped half hour", () => {
      const busy = [busyUtc("2026-10-03T15:00:00Z", "2026-10-03T16:00:00Z")];
      expect(slotsOf("2026-10-04", "Australia/Lord_Howe", [sunday("01:00", "04:00")], busy)).toEqual([
        slot("01:00", "01:30", "free"),
        slot("01:30", "03:00", "busy"),
        slot("03:00", "04:00", "free"),
      ]);
    });
    it("2026-10-04: a window starting in the skipped half hour", () => {
      expect(slotsOf("2026-10-04", "Australia/Lord_Howe", [sunday("02:15", "03:00")])).toEqual([slot("02:45", "03:00", "free")]);
    });
    it("2026-04-05: a meeting across the repeated half hour", () => {
      const busy = [busyUtc("2026-04-04T14:45:00Z", "2026-04-04T15:15:00Z")];
      expect(slotsOf("2026-04-05", "Australia/Lord_Howe", [sunday("01:00", "03:00")], busy)).toEqual([
        slot("01:00", "01:45", "free"),
        slot("01:45", "01:45", "busy"),
        slot("01:45", "03:00", "free"),
      ]);
    });
  });

  it("writes the following midnight as 24:00", () => {
    const clock = ZoneClock.of("Europe/Berlin");
    const next = clock.startOfDay("2026-03-30");
    expect(localClockTime(next, clock, next)).toBe("24:00");
    expect(localClockTime(next - 60_000, clock, next)).toBe("23:59");
    expect(localClockTime(clock.startOfDay("2026-03-29"), clock, next)).toBe("00:00");
  });

  const zones = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata", "America/Havana"];
  const changeDays = ["2026-03-29", "2026-10-25", "2026-03-08", "2026-11-01", "2026-04-05", "2026-10-04", "2026-03-11"];
  const time = fc.integer({ min: 0, max: 1439 }).map((m) => `${String(Math.floor(m / 60)).padStart(2, "0")}:${String(m % 60).padStart(2, "0")}`);
  const entry = fc
    // Most change days are Sundays; weight them so most runs have windows.
    .tuple(fc.constantFrom(...WEEKDAYS, "sunday", "sunday", "sunday", "wednesday"), time, time)
    .filter(([, a, b]) => a !== b)
    .map(([day, a, b]): WorkingHoursEntry => ({ day, start: a < b ? a : b, end: a < b ? b : a }));

  it("tiles every window, alternates, never shows free over busy, and prints the local clock (property)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.constantFrom(...changeDays),
        fc.array(entry, { maxLength: 4 }),
        fc.array(fc.tuple(fc.integer({ min: -2 * 60, max: 26 * 60 * 60 }), fc.integer({ min: 0, max: 3 * 60 * 60 })), { maxLength: 8 }),
        (zone, localDate, workingHours, busySeconds) => {
          const dayStart = ZoneClock.of(zone).startOfDay(localDate);
          const busy = busySeconds.map(([offset, length]) => ({ start: dayStart + offset * 1000, end: dayStart + (offset + length) * 1000 }));
          const widened = merge(busy.map((b) => ({ start: Math.floor(b.start / 60_000) * 60_000, end: Math.ceil(b.end / 60_000) * 60_000 })));
          const pieces = dayPieces({ localDate, zone, workingHours, busy });
          const windows = workingWindowsOn(localDate, zone, workingHours);
          // Each window is covered exactly by consecutive, alternating, non-empty pieces.
          let k = 0;
          for (const window of windows) {
            expect(pieces[k]!.start).toBe(window.start);
            for (; ; k++) {
              const p = pieces[k]!;
              expect(p.end).toBeGreaterThan(p.start);
              const overlapsBusy = widened.some((b) => b.start < p.end && p.start < b.end);
              const insideBusy = widened.some((b) => b.start <= p.start && p.end <= b.end);
              if (p.status === "free") expect(overlapsBusy).toBe(false);
              else expect(insideBusy).toBe(true);
              if (p.end === window.end) break;
              expect(pieces[k + 1]!.start).toBe(p.end);
              expect(pieces[k + 1]!.status).not.toBe(p.status);
            }
            k++;
          }
          expect(k).toBe(pieces.length);
          const view = dayView({ localDate, zone, workingHours, busy });
          const nextMidnight = ZoneClock.of(zone).startOfDay(addDays(localDate, 1));
          const hhmm = (ms: number) => (ms === nextMidnight ? "24:00" : DateTime.fromMillis(ms, { zone }).toFormat("HH:mm"));
          expect(view.slots).toEqual(pieces.map((p) => ({ start: hhmm(p.start), end: hhmm(p.end), status: p.status })));
        },
      ),
      { numRuns: 300 },
    );
  });
});
