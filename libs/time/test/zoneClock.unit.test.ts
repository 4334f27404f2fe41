import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { IANAZone } from "luxon";
import { wallMidnight, ZoneClock, isValidTimeZone } from "../src/index.js";

const MIN = 60_000;
const utc = (iso: string) => Date.parse(iso);
/** Wall-clock milliseconds of a local reading "YYYY-MM-DDTHH:MM". */
const wall = (reading: string) => utc(`${reading}:00Z`);
const iso = (ms: number) => new Date(ms).toISOString().replace(".000", "");

const ZONES = [
  "Europe/Berlin",
  "America/New_York",
  "Australia/Lord_Howe",
  "Asia/Kolkata",
  "America/Sao_Paulo",
  "Africa/Casablanca",
  "America/Havana",
  "Pacific/Chatham",
  "America/St_Johns",
  "UTC",
];

describe("ZoneClock offsets", () => {
  it("agree with luxon at any instant between 2000 and 2040 (property)", () => {
    fc.assert(
      fc.property(fc.constantFrom(...ZONES), fc.integer({ min: utc("2000-01-01T00:00:00Z") / 1000, max: utc("2040-01-01T00:00:00Z") / 1000 }), (zone, seconds) => {
        const instant = seconds * 1000;
        expect(ZoneClock.of(zone).offsetAt(instant)).toBe(IANAZone.create(zone).offset(instant) * MIN);
      }),
      { numRuns: 500 },
    );
  });

  it("change at the exact second of a transition", () => {
    const berlin = ZoneClock.of("Europe/Berlin");
    expect(berlin.offsetAt(utc("2026-03-29T00:59:59Z"))).toBe(60 * MIN);
    expect(berlin.offsetAt(utc("2026-03-29T01:00:00Z"))).toBe(120 * MIN);
    const lordHowe = ZoneClock.of("Australia/Lord_Howe");
    expect(lordHowe.offsetAt(utc("2026-04-04T14:59:59Z"))).toBe(660 * MIN);
    expect(lordHowe.offsetAt(utc("2026-04-04T15:00:00Z"))).toBe(630 * MIN);
  });

  it("refuse unknown zones", () => {
    expect(() => ZoneClock.of("Mars/Olympus_Mons")).toThrow(RangeError);
    expect(isValidTimeZone("Mars/Olympus_Mons")).toBe(false);
    expect(isValidTimeZone("")).toBe(false);
    expect(isValidTimeZone("Asia/Kolkata")).toBe(true);
  });
});

describe("ZoneClock local → instant", () => {
  it("maps an ordinary reading to its one instant", () => {
    expect(iso(ZoneClock.of("Asia/Kolkata").fromWall(wall("2026-03-29T09:00")))).toBe("2026-03-29T03:30:00Z");
    expect(iso(ZoneClock.of("Europe/Berlin").fromWall(wall("2026-03-29T01:59")))).toBe("2026-03-29T00:59:00Z");
    expect(iso(ZoneClock.of("Europe/Berlin").fromWall(wall("2026-03-29T03:00")))).toBe("2026-03-29T01:00:00Z");
  });

  it("moves a reading in a skipped hour forward by the gap", () => {
    // Berlin 2026-03-29: 02:00 CET jumps to 03:00 CEST; 02:30 reads as 03:30 CEST.
    expect(iso(ZoneClock.of("Europe/Berlin").fromWall(wall("2026-03-29T02:30")))).toBe("2026-03-29T01:30:00Z");
    // New York 2026-03-08: 02:15 reads as 03:15 EDT.
    expect(iso(ZoneClock.of("America/New_York").fromWall(wall("2026-03-08T02:15")))).toBe("2026-03-08T07:15:00Z");
    // Lord Howe 2026-10-04: 02:00 LHST jumps to 02:30 LHDT; 02:15 reads as 02:45 LHDT (+11).
    expect(iso(ZoneClock.of("Australia/Lord_Howe").fromWall(wall("2026-10-04T02:15")))).toBe("2026-10-03T15:45:00Z");
  });

  it("takes the first occurrence of a reading in a repeated hour", () => {
    // Berlin 2026-10-25: 02:30 happens at 00:30Z (CEST) and 01:30Z (CET).
    expect(iso(ZoneClock.of("Europe/Berlin").fromWall(wall("2026-10-25T02:30")))).toBe("2026-10-25T00:30:00Z");
    // New York 2026-11-01: 01:30 happens at 05:30Z (EDT) and 06:30Z (EST).
    expect(iso(ZoneClock.of("America/New_York").fromWall(wall("2026-11-01T01:30")))).toBe("2026-11-01T05:30:00Z");
    // Lord Howe 2026-04-05: 01:45 happens at 14:45Z (LHDT) and 15:15Z (LHST).
    expect(iso(ZoneClock.of("Australia/Lord_Howe").fromWall(wall("2026-04-05T01:45")))).toBe("2026-04-04T14:45:00Z");
  });

  it("starts a day whose midnight is skipped at its first moment (Havana, 2026-03-08)", () => {
    expect(iso(ZoneClock.of("America/Havana").startOfDay("2026-03-08"))).toBe("2026-03-08T05:00:00Z");
    expect(ZoneClock.of("America/Havana").localDateOf(utc("2026-03-08T05:00:00Z"))).toBe("2026-03-08");
  });

  it("round-trips, picks the earliest instant, and only moves readings that do not exist (property)", () => {
    fc.assert(
      fc.property(fc.constantFrom(...ZONES), fc.integer({ min: wall("2000-01-01T00:00") / MIN, max: wall("2040-01-01T00:00") / MIN }), (zone, minutes) => {
        const clock = ZoneClock.of(zone);
        const reading = minutes * MIN;
        const instant = clock.fromWall(reading);
        const offsets = [clock.offsetAt(reading - 86_400_000), clock.offsetAt(reading + 86_400_000)];
        const exact = offsets.map((o) => reading - o).filter((t) => clock.toWall(t) === reading);
        if (exact.length > 0) {
          expect(instant).toBe(Math.min(...exact));
        } else {
          expect(instant).toBe(reading - offsets[0]!);
          expect(clock.toWall(instant)).toBeGreaterThan(reading);
        }
      }),
      { numRuns: 500 },
    );
  });

  it("reads local dates on the zone's clock", () => {
    const instant = utc("2026-03-01T23:30:00Z");
    expect(ZoneClock.of("Europe/Berlin").localDateOf(instant)).toBe("2026-03-02");
    expect(ZoneClock.of("America/New_York").localDateOf(instant)).toBe("2026-03-01");
    expect(ZoneClock.of("UTC").at("2026-03-01", 90)).toBe(wallMidnight("2026-03-01") + 90 * MIN);
  });
});
