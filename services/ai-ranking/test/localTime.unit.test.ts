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

  it("is right to the minute around changes that fall on a half hour of UTC (Adelaide, St John's)", () => {
    const changes = [
      ["Australia/Adelaide", "2026-04-04T16:30:00Z"],
      ["Australia/Adelaide", "2026-10-03T16:30:00Z"],
      ["America/St_Johns", "2026-03-08T05:30:00Z"],
      ["America/St_Johns", "2026-11-01T04:30:00Z"],
    ] as const;
    for (const [zone, change] of changes) {
      const reader = ZoneReader.of(zone);
      // Every 5 minutes from two hours before the change to two hours after.
      for (let t = Date.parse(change) - 2 * 3_600_000; t <= Date.parse(change) + 2 * 3_600_000; t += 5 * 60_000) {
        const expected = DateTime.fromMillis(t, { zone });
        expect({ zone, at: new Date(t).toISOString(), minute: reader.read(t).minuteOfDay }).toEqual({ zone, at: new Date(t).toISOString(), minute: expected.hour * 60 + expected.minute });
      }
    }
  });

  it("gives each local day the range of instants that read as it, exactly", () => {
    // Santiago turns its clock back at midnight (the Saturday runs an hour longer) and forward at it (Sunday starts
    // at one); Havana changes at midnight and at one; Lord Howe by half an hour, Chatham at 2:45; St John's turned
    // back at 00:01 in 2010 (the Saturday read again for an hour after the Sunday began).
    const zones = ["Europe/Berlin", "America/New_York", "America/Santiago", "America/Havana", "Australia/Lord_Howe", "Pacific/Chatham", "America/St_Johns", "Asia/Kolkata", "UTC"];
    const stretches = [
      [Date.parse("2010-10-25T00:00:00Z"), Date.parse("2010-11-15T00:00:00Z")],
      [Date.parse("2026-02-25T00:00:00Z"), Date.parse("2026-04-15T00:00:00Z")],
      [Date.parse("2026-08-25T00:00:00Z"), Date.parse("2026-11-10T00:00:00Z")],
    ] as const;
    const HOUR = 3_600_000;
    const wrong: string[] = [];
    for (const zone of zones) {
      const reader = ZoneReader.of(zone);
      const days = new Set<number>();
      for (const [start, end] of stretches) {
        for (let t = start; t < end; t += 5 * 60_000) {
          const day = reader.read(t).dayNumber;
          days.add(day);
          const { from, to } = reader.dayRange(day);
          if (t < from || t >= to) wrong.push(`${zone}: ${new Date(t).toISOString()} outside its day's range`);
        }
      }
      for (const day of days) {
        const { from, to } = reader.dayRange(day);
        const edges = [reader.read(from - 1).dayNumber, reader.read(from).dayNumber, reader.read(to - 1).dayNumber, reader.read(to).dayNumber];
        if (edges.join() !== [day - 1, day, day, day + 1].join()) wrong.push(`${zone} day ${day}: the range's edges read as days ${edges.join(", ")}`);
        if (Math.abs(to - from - 24 * HOUR) > HOUR) wrong.push(`${zone} day ${day}: ${(to - from) / HOUR} hours long`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("reads an unknown zone as UTC rather than failing", () => {
    expect(ZoneReader.of("Mars/Olympus").read(Date.parse("2026-03-03T10:30:00Z"))).toMatchObject({ weekday: 1, minuteOfDay: 630 });
  });
});
