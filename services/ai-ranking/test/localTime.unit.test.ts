import { DateTime } from "luxon";
import { describe, expect, it } from "vitest";
import { ZoneReader } from "../src/domain/localTime.js";

describe("ZoneReader", () => {
  it("reads weekday, minute of day and local date as luxon does, across DST changes", () => {
    const zones = ["Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "UTC"];
    // Every 37 minutes through March and April 2026 (both sides' spring changes) and late October.
    const instants = [
      ...Array.from({ length: 2_400 }, (_, i) => Date.parse("2026-03-01T00:00:00Z") + i * 37 * 60_000),
      ...Array.from({ length: 200 }, (_, i) => Date.parse("2026-10-24T00:00:00Z") + i * 37 * 60_000),
    ];
    for (const zone of zones) {
      const reader = ZoneReader.of(zone);
      for (const t of instants) {
        const expected = DateTime.fromMillis(t, { zone });
        const local = reader.read(t);
        expect({ zone, t, weekday: local.weekday, minute: local.minuteOfDay }).toEqual({ zone, t, weekday: expected.weekday - 1, minute: expected.hour * 60 + expected.minute });
      }
      const day = reader.read(Date.parse("2026-03-10T12:00:00Z")).dayNumber;
      expect(reader.read(Date.parse("2026-03-11T12:00:00Z")).dayNumber).toBe(day + 1);
    }
  });

  it("reads an unknown zone as UTC rather than failing", () => {
    expect(ZoneReader.of("Mars/Olympus").read(Date.parse("2026-03-03T10:30:00Z"))).toMatchObject({ weekday: 1, minuteOfDay: 630 });
  });
});
