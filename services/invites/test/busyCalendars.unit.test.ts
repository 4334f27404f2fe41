import { describe, expect, it } from "vitest";
import { busyCalendarsOf, countsAsBusy, PRIMARY_CALENDAR, windowsOf } from "../src/domain/busyCalendars.js";

describe("busy calendars of a connection", () => {
  it("counts every CalDAV calendar and the main Google or Microsoft one until the user chooses", () => {
    expect(busyCalendarsOf({ provider: "caldav", busyCalendars: null })).toBeNull();
    expect(busyCalendarsOf({ provider: "google", busyCalendars: null })).toEqual([PRIMARY_CALENDAR]);
    expect(busyCalendarsOf({ provider: "microsoft", busyCalendars: null })).toEqual([PRIMARY_CALENDAR]);
    expect(countsAsBusy({ provider: "caldav", busyCalendars: null }, "https://dav.example/ann/home/")).toBe(true);
    expect(countsAsBusy({ provider: "google", busyCalendars: null }, "family@group.calendar.google.com")).toBe(false);
    expect(countsAsBusy({ provider: "microsoft", busyCalendars: null }, PRIMARY_CALENDAR)).toBe(true);
  });

  it("counts exactly the chosen ones once chosen, none when the user chose none", () => {
    const chosen = { provider: "google" as const, busyCalendars: ["work@group.calendar.google.com"] };
    expect(busyCalendarsOf(chosen)).toEqual(["work@group.calendar.google.com"]);
    expect(countsAsBusy(chosen, PRIMARY_CALENDAR)).toBe(false);
    expect(countsAsBusy(chosen, "work@group.calendar.google.com")).toBe(true);
    expect(busyCalendarsOf({ provider: "microsoft", busyCalendars: [] })).toEqual([]);
    expect(countsAsBusy({ provider: "caldav", busyCalendars: [] }, "https://dav.example/ann/home/")).toBe(false);
  });
});

describe("windows of a long span", () => {
  const DAY = 86_400_000;
  it("keeps a span within the bound whole, and cuts a longer one into consecutive windows that cover it exactly", () => {
    expect(windowsOf(0, 367 * DAY, 1_825 * DAY)).toEqual([[0, 367 * DAY]]);
    expect(windowsOf(0, 1_825 * DAY, 1_825 * DAY)).toEqual([[0, 1_825 * DAY]]);
    expect(windowsOf(0, 4_000 * DAY, 1_825 * DAY)).toEqual([
      [0, 1_825 * DAY],
      [1_825 * DAY, 3_650 * DAY],
      [3_650 * DAY, 4_000 * DAY],
    ]);
    expect(windowsOf(5, 5, DAY)).toEqual([]);
  });
});
