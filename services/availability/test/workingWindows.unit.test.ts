import { describe, expect, it } from "vitest";
import type { WorkingHoursEntry } from "@sched/proto";
import { workingWindowsBetween, workingWindowsOn } from "../src/domain/workingWindows.js";

const iso = (ms: number) => new Date(ms).toISOString().replace(".000", "");
const show = (windows: { start: number; end: number }[]) => windows.map((w) => `${iso(w.start)}–${iso(w.end)}`);
const sunday = (start: string, end: string): WorkingHoursEntry => ({ day: "sunday", start, end });

describe("workingWindowsOn", () => {
  it("gives nothing on a day without entries", () => {
    expect(workingWindowsOn("2026-03-02", "Europe/Berlin", [sunday("09:00", "17:00")])).toEqual([]);
  });

  it("gives one window per separate entry and merges overlapping or touching ones", () => {
    const hours = [sunday("13:00", "17:00"), sunday("09:00", "12:00"), sunday("11:00", "12:30"), sunday("17:00", "18:00")];
    expect(show(workingWindowsOn("2026-03-01", "Asia/Kolkata", hours))).toEqual([
      "2026-03-01T03:30:00Z–2026-03-01T07:00:00Z",
      "2026-03-01T07:30:00Z–2026-03-01T12:30:00Z",
    ]);
  });

  describe("Europe/Berlin, 2026-03-29 (02:00 CET → 03:00 CEST, a 23-hour day)", () => {
    it("spans the change at its real length", () => {
      expect(show(workingWindowsOn("2026-03-29", "Europe/Berlin", [sunday("01:00", "05:00")]))).toEqual(["2026-03-29T00:00:00Z–2026-03-29T03:00:00Z"]);
    });
    it("moves a start in the skipped hour forward by the gap", () => {
      expect(show(workingWindowsOn("2026-03-29", "Europe/Berlin", [sunday("02:30", "06:00")]))).toEqual(["2026-03-29T01:30:00Z–2026-03-29T04:00:00Z"]);
    });
    it("moves an end in the skipped hour forward by the gap", () => {
      expect(show(workingWindowsOn("2026-03-29", "Europe/Berlin", [sunday("00:00", "02:30")]))).toEqual(["2026-03-28T23:00:00Z–2026-03-29T01:30:00Z"]);
    });
    it("drops a window that the move leaves empty or inverted", () => {
      expect(workingWindowsOn("2026-03-29", "Europe/Berlin", [sunday("02:30", "03:30")])).toEqual([]);
      expect(workingWindowsOn("2026-03-29", "Europe/Berlin", [sunday("02:30", "03:15")])).toEqual([]);
    });
  });

  describe("Europe/Berlin, 2026-10-25 (03:00 CEST → 02:00 CET, a 25-hour day)", () => {
    it("spans the change at its real length", () => {
      expect(show(workingWindowsOn("2026-10-25", "Europe/Berlin", [sunday("01:00", "05:00")]))).toEqual(["2026-10-24T23:00:00Z–2026-10-25T04:00:00Z"]);
    });
    it("starts a window in the repeated hour at its first occurrence", () => {
      expect(show(workingWindowsOn("2026-10-25", "Europe/Berlin", [sunday("02:30", "04:00")]))).toEqual(["2026-10-25T00:30:00Z–2026-10-25T03:00:00Z"]);
    });
    it("ends a window in the repeated hour at its first occurrence", () => {
      expect(show(workingWindowsOn("2026-10-25", "Europe/Berlin", [sunday("00:00", "02:30")]))).toEqual(["2026-10-24T22:00:00Z–2026-10-25T00:30:00Z"]);
    });
  });

  describe("America/New_York", () => {
    it("2026-03-08: a start in the skipped hour moves to 03:15 EDT", () => {
      expect(show(workingWindowsOn("2026-03-08", "America/New_York", [sunday("02:15", "04:00")]))).toEqual(["2026-03-08T07:15:00Z–2026-03-08T08:00:00Z"]);
    });
    it("2026-03-08: the whole 23-hour day", () => {
      expect(show(workingWindowsOn("2026-03-08", "America/New_York", [sunday("00:00", "23:59")]))).toEqual(["2026-03-08T05:00:00Z–2026-03-09T03:59:00Z"]);
    });
    it("2026-11-01: a start in the repeated hour takes 01:30 EDT", () => {
      expect(show(workingWindowsOn("2026-11-01", "America/New_York", [sunday("01:30", "03:00")]))).toEqual(["2026-11-01T05:30:00Z–2026-11-01T08:00:00Z"]);
    });
  });

  describe("Australia/Lord_Howe (30-minute shift)", () => {
    it("2026-04-05: 02:00 LHDT → 01:30 LHST; a window over the change is 30 minutes longer", () => {
      expect(show(workingWindowsOn("2026-04-05", "Australia/Lord_Howe", [sunday("01:00", "03:00")]))).toEqual(["2026-04-04T14:00:00Z–2026-04-04T16:30:00Z"]);
    });
    it("2026-04-05: a start in the repeated half hour takes its first occurrence", () => {
      expect(show(workingWindowsOn("2026-04-05", "Australia/Lord_Howe", [sunday("01:45", "02:30")]))).toEqual(["2026-04-04T14:45:00Z–2026-04-04T16:00:00Z"]);
    });
    it("2026-10-04: 02:00 LHST → 02:30 LHDT; a window over the change is 30 minutes shorter", () => {
      expect(show(workingWindowsOn("2026-10-04", "Australia/Lord_Howe", [sunday("01:00", "04:00")]))).toEqual(["2026-10-03T14:30:00Z–2026-10-03T17:00:00Z"]);
    });
    it("2026-10-04: a start in the skipped half hour moves forward 30 minutes", () => {
      expect(show(workingWindowsOn("2026-10-04", "Australia/Lord_Howe", [sunday("02:15", "03:00")]))).toEqual(["2026-10-03T15:45:00Z–2026-10-03T16:00:00Z"]);
    });
  });

  it("Asia/Kolkata (+05:30, no daylight saving) on the day Europe changes", () => {
    expect(show(workingWindowsOn("2026-03-29", "Asia/Kolkata", [sunday("02:30", "03:30")]))).toEqual(["2026-03-28T21:00:00Z–2026-03-28T22:00:00Z"]);
  });
});

describe("workingWindowsBetween", () => {
  const weekdays: WorkingHoursEntry[] = (["monday", "tuesday", "wednesday", "thursday", "friday"] as const).map((day) => ({ day, start: "09:00", end: "17:00" }));

  it("lists the windows of every local date the range touches, across a clock change", () => {
    // Friday 2026-03-27 to Tuesday 2026-03-31 in Berlin; the weekend has no windows.
    const from = Date.parse("2026-03-27T12:00:00Z");
    const to = Date.parse("2026-03-31T07:30:00Z");
    expect(show(workingWindowsBetween(from, to, "Europe/Berlin", weekdays))).toEqual([
      "2026-03-27T08:00:00Z–2026-03-27T16:00:00Z",
      "2026-03-30T07:00:00Z–2026-03-30T15:00:00Z",
      "2026-03-31T07:00:00Z–2026-03-31T15:00:00Z",
    ]);
  });

  it("is empty without working hours or for an empty range", () => {
    expect(workingWindowsBetween(0, 10 * 86_400_000, "UTC", [])).toEqual([]);
    expect(workingWindowsBetween(10, 10, "UTC", weekdays)).toEqual([]);
  });
});
