import fc from "fast-check";
import { DateTime } from "luxon";
import { describe, expect, it } from "vitest";
import { checkRule, instantOfWallClock, occurrenceStarts, type SeriesRule } from "../src/domain/recurrence.js";

/** Zones with daylight-saving changes, half-hour and 45-minute offsets, a half-hour change, and none. */
const ZONES = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "America/St_Johns", "Pacific/Chatham", "Asia/Kolkata", "Asia/Tehran", "America/Santiago", "UTC"];

const startArb = fc.record({
  zone: fc.constantFrom(...ZONES),
  // Days on and around the changes are common: any day of 2026–2027.
  day: fc.integer({ min: 0, max: 729 }),
  hour: fc.integer({ min: 0, max: 23 }),
  minute: fc.constantFrom(0, 15, 30, 45),
});

const ruleArb = fc.oneof(
  fc.record({ freq: fc.constant("DAILY"), interval: fc.integer({ min: 1, max: 3 }), count: fc.integer({ min: 1, max: 200 }) }).map((r) => `FREQ=DAILY;INTERVAL=${r.interval};COUNT=${r.count}`),
  fc.record({ interval: fc.integer({ min: 1, max: 2 }), count: fc.integer({ min: 1, max: 120 }) }).map((r) => `FREQ=WEEKLY;INTERVAL=${r.interval};COUNT=${r.count}`),
  fc.integer({ min: 1, max: 40 }).map((count) => `FREQ=MONTHLY;COUNT=${count}`),
);

function seriesOf(s: { zone: string; day: number; hour: number; minute: number }, rule: string): { series: SeriesRule; count: number; wall: DateTime } | undefined {
  const wall = DateTime.fromObject({ year: 2026, month: 1, day: 1, hour: s.hour, minute: s.minute }, { zone: s.zone }).plus({ days: s.day });
  // A start in a skipped hour cannot be given (the API refuses it); start on the hour's wall clock where it exists.
  if (wall.hour !== s.hour || wall.minute !== s.minute) return undefined;
  const checked = checkRule(rule, wall.toJSDate(), s.zone);
  // Monthly from the 29th–31st skips the months without that day (RFC 5545), so a COUNT the
  // generator thinks short can run past five years: rightly refused, and no series to test.
  if (!checked.ok && checked.problem.includes("longer than")) return undefined;
  if (!checked.ok) throw new Error(`${rule}: ${checked.problem}`);
  return { series: { rule: checked.rule, timeZone: s.zone, start: wall.toJSDate() }, count: checked.occurrences, wall };
}

const FAR = { from: new Date("2025-12-01T00:00:00Z"), to: new Date("2036-01-01T00:00:00Z") };

/** Building a rule costs milliseconds, more on a loaded machine: the runs get minutes. */
describe("recurrence across daylight-saving changes (properties)", () => {
  it("every occurrence keeps its local wall-clock time, or is moved forward by a skipped hour", () => {
    fc.assert(
      fc.property(startArb, ruleArb, (s, rule) => {
        const made = seriesOf(s, rule);
        if (!made) return;
        for (const start of occurrenceStarts(made.series, FAR.from, FAR.to)) {
          const seen = DateTime.fromJSDate(start, { zone: s.zone });
          if (seen.hour === s.hour && seen.minute === s.minute) continue;
          // Otherwise the wall clock was skipped that day: the start is that day's wall clock moved forward by the gap.
          const sameDay = seen.startOf("day").set({ hour: s.hour, minute: s.minute });
          const before = sameDay.minus({ hours: 3 });
          const gap = seen.offset - before.offset;
          expect(gap).toBeGreaterThan(0);
          expect(seen.toMillis()).toBe(Date.UTC(sameDay.year, sameDay.month - 1, sameDay.day, s.hour, s.minute) - before.offset * 60_000);
        }
      }),
      { numRuns: 100 },
    );
  }, 300_000);

  it("no occurrence is lost or doubled: COUNT occurrences on distinct local dates, and windows split anywhere add up to the whole", () => {
    fc.assert(
      fc.property(startArb, ruleArb, fc.array(fc.integer({ min: 0, max: 1_000_000 }), { maxLength: 6 }), (s, rule, cuts) => {
        const made = seriesOf(s, rule);
        if (!made) return;
        const whole = occurrenceStarts(made.series, FAR.from, FAR.to);
        expect(whole).toHaveLength(Number(/COUNT=(\d+)/.exec(rule)![1]));
        expect(whole[0]!.getTime()).toBe(made.series.start.getTime());
        const dates = whole.map((d) => DateTime.fromJSDate(d, { zone: s.zone }).toISODate());
        expect(new Set(dates).size).toBe(dates.length);
        for (let i = 1; i < whole.length; i++) expect(whole[i]!.getTime()).toBeGreaterThan(whole[i - 1]!.getTime());
        // Split the series' span at arbitrary instants (some right on an occurrence) and expand each piece alone.
        const first = whole[0]!.getTime();
        const span = whole[whole.length - 1]!.getTime() - first + 1;
        const edges = [...new Set(cuts.map((c) => first + Math.floor((c / 1_000_000) * span)))].sort((a, b) => a - b);
        const bounds = [FAR.from.getTime(), ...edges, FAR.to.getTime()];
        const pieces = bounds.slice(1).flatMap((to, i) => occurrenceStarts(made.series, new Date(bounds[i]!), new Date(to)));
        expect(pieces.map((d) => d.getTime())).toEqual(whole.map((d) => d.getTime()));
      }),
      { numRuns: 80 },
    );
  }, 300_000);

  it("a wall clock is placed as luxon's zone data says: the first of a repeated time, a skipped time moved forward by the gap", () => {
    fc.assert(
      fc.property(fc.constantFrom(...ZONES), fc.integer({ min: 0, max: 2 * 366 * 96 }), (zone, quarter) => {
        const floating = Date.UTC(2026, 0, 1) + quarter * 15 * 60_000;
        const f = new Date(floating);
        const wall = DateTime.fromObject(
          { year: f.getUTCFullYear(), month: f.getUTCMonth() + 1, day: f.getUTCDate(), hour: f.getUTCHours(), minute: f.getUTCMinutes() },
          { zone },
        );
        const possible = wall.getPossibleOffsets().map((d) => d.toMillis());
        // Luxon moves a skipped time forward by the gap; of a repeated one, the first instant is RFC 5545's.
        const expected = possible.length > 0 ? Math.min(...possible) : wall.toMillis();
        expect(instantOfWallClock(floating, zone).getTime()).toBe(expected);
      }),
      { numRuns: 3_000 },
    );
  }, 300_000);

  it("every quarter hour of every day a zone changes its offset in 2026–2027 is placed as luxon's zone data says", () => {
    for (const zone of ZONES) {
      for (let day = DateTime.fromObject({ year: 2026 }, { zone: "utc" }); day.year < 2028; day = day.plus({ days: 1 })) {
        const offsetOf = (d: DateTime) => d.setZone(zone).offset;
        if (offsetOf(day) === offsetOf(day.plus({ days: 1 }))) continue;
        // The change lies within this UTC day: every local quarter hour of the local days around it.
        for (let q = -96; q < 3 * 96; q++) {
          const floating = day.toMillis() + q * 15 * 60_000;
          const f = new Date(floating);
          const wall = DateTime.fromObject(
            { year: f.getUTCFullYear(), month: f.getUTCMonth() + 1, day: f.getUTCDate(), hour: f.getUTCHours(), minute: f.getUTCMinutes() },
            { zone },
          );
          const possible = wall.getPossibleOffsets().map((d) => d.toMillis());
          expect(instantOfWallClock(floating, zone).getTime()).toBe(possible.length > 0 ? Math.min(...possible) : wall.toMillis());
        }
      }
    }
  }, 300_000);
});
