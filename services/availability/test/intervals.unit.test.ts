import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { DateTime } from "luxon";
import { clip, gridStarts, intersect, merge, subtract, tile, union, type Interval } from "../src/domain/intervals.js";

const iv = (start: number, end: number): Interval => ({ start, end });
const MIN = 60_000;
const utc = (iso: string) => Date.parse(iso);

/** Intervals on a small integer timeline, so a boolean array can model them. */
const SIZE = 60;
const smallInterval = fc
  .tuple(fc.integer({ min: 0, max: SIZE }), fc.integer({ min: 0, max: 12 }))
  .map(([start, length]) => iv(start, Math.min(SIZE, start + length)));
const smallList = fc.array(smallInterval, { maxLength: 12 });

function covered(list: readonly Interval[]): boolean[] {
  const cells = new Array<boolean>(SIZE).fill(false);
  for (const i of list) for (let t = i.start; t < i.end; t++) cells[t] = true;
  return cells;
}

function expectMergedForm(list: readonly Interval[]) {
  for (const i of list) expect(i.end).toBeGreaterThan(i.start);
  for (let k = 1; k < list.length; k++) expect(list[k]!.start).toBeGreaterThan(list[k - 1]!.end);
}

describe("merge", () => {
  it("sorts, coalesces overlapping and touching intervals and drops empty ones", () => {
    expect(merge([iv(10, 20), iv(0, 5), iv(5, 7), iv(15, 30), iv(40, 40), iv(50, 45), iv(32, 35)])).toEqual([
      iv(0, 7),
      iv(10, 30),
      iv(32, 35),
    ]);
  });

  it("does not modify its input", () => {
    const input = [iv(5, 10), iv(0, 6)];
    merge(input);
    expect(input).toEqual([iv(5, 10), iv(0, 6)]);
  });

  it("handles unordered input with fractional milliseconds (the comparator fallback)", () => {
    expect(merge([iv(10.5, 20), iv(0.25, 10.5), iv(30, 31)])).toEqual([iv(0.25, 20), iv(30, 31)]);
  });

  it("handles unordered input spread over centuries", () => {
    const far = utc("2900-01-01T00:00:00Z");
    expect(merge([iv(far, far + 10), iv(-far, -far + 10), iv(0, 5), iv(3, 8)])).toEqual([iv(-far, -far + 10), iv(0, 8), iv(far, far + 10)]);
  });

  it("covers exactly the time its input covers, in merged form (property)", () => {
    fc.assert(
      fc.property(smallList, (list) => {
        const merged = merge(list);
        expectMergedForm(merged);
        expect(covered(merged)).toEqual(covered(list));
      }),
    );
  });
});

describe("union", () => {
  it("is the merge of all lists together (property)", () => {
    fc.assert(
      fc.property(fc.array(smallList, { maxLength: 6 }), (lists) => {
        expect(union(lists.map(merge))).toEqual(merge(lists.flat()));
      }),
    );
  });

  it("of no lists is empty", () => {
    expect(union([])).toEqual([]);
  });
});

describe("subtract", () => {
  it("removes busy time from the middle, edges and whole of intervals", () => {
    expect(subtract([iv(0, 10), iv(20, 30), iv(40, 50)], [iv(2, 4), iv(8, 22), iv(40, 50)])).toEqual([iv(0, 2), iv(4, 8), iv(22, 30)]);
  });

  it("matches the set difference on a model timeline (property)", () => {
    fc.assert(
      fc.property(smallList, smallList, (a, b) => {
        const result = subtract(merge(a), merge(b));
        expectMergedForm(result);
        const ca = covered(a);
        const cb = covered(b);
        expect(covered(result)).toEqual(ca.map((x, t) => x && !cb[t]));
      }),
    );
  });
});

describe("intersect", () => {
  it("keeps only the time in both lists", () => {
    expect(intersect([iv(0, 10), iv(20, 30)], [iv(5, 25), iv(28, 40)])).toEqual([iv(5, 10), iv(20, 25), iv(28, 30)]);
  });

  it("matches the set intersection on a model timeline (property)", () => {
    fc.assert(
      fc.property(smallList, smallList, (a, b) => {
        const result = intersect(merge(a), merge(b));
        expectMergedForm(result);
        const cb = covered(b);
        expect(covered(result)).toEqual(covered(a).map((x, t) => x && cb[t]));
      }),
    );
  });
});

describe("clip", () => {
  it("cuts intervals to the window and drops those outside it", () => {
    expect(clip([iv(0, 5), iv(8, 12), iv(14, 16), iv(20, 30)], iv(10, 25))).toEqual([iv(10, 12), iv(14, 16), iv(20, 25)]);
  });
});

describe("tile", () => {
  it("alternates free and busy pieces that cover the window exactly", () => {
    expect(tile(iv(0, 100), [iv(-10, 10), iv(30, 40), iv(90, 120)])).toEqual([
      { start: 0, end: 10, status: "busy" },
      { start: 10, end: 30, status: "free" },
      { start: 30, end: 40, status: "busy" },
      { start: 40, end: 90, status: "free" },
      { start: 90, end: 100, status: "busy" },
    ]);
  });

  it("gives one free piece when nothing is busy, one busy piece when everything is", () => {
    expect(tile(iv(0, 10), [])).toEqual([{ start: 0, end: 10, status: "free" }]);
    expect(tile(iv(0, 10), [iv(-5, 15)])).toEqual([{ start: 0, end: 10, status: "busy" }]);
  });

  it("merges busy time given in any order", () => {
    expect(tile(iv(0, 50), [iv(30, 40), iv(5, 10), iv(8, 20), iv(20, 25)])).toEqual([
      { start: 0, end: 5, status: "free" },
      { start: 5, end: 25, status: "busy" },
      { start: 25, end: 30, status: "free" },
      { start: 30, end: 40, status: "busy" },
      { start: 40, end: 50, status: "free" },
    ]);
  });

  it("gives nothing for an empty window", () => {
    expect(tile(iv(10, 10), [iv(0, 20)])).toEqual([]);
  });

  it("tiles exactly, alternates, has no empty piece, and free never overlaps busy (property)", () => {
    fc.assert(
      fc.property(smallInterval, smallList, fc.boolean(), (window, busyInput, premerge) => {
        const busy = merge(busyInput);
        const pieces = tile(window, premerge ? busy : busyInput);
        if (window.end <= window.start) {
          expect(pieces).toEqual([]);
          return;
        }
        expect(pieces[0]!.start).toBe(window.start);
        expect(pieces[pieces.length - 1]!.end).toBe(window.end);
        const busyCells = covered(busy);
        for (let k = 0; k < pieces.length; k++) {
          const p = pieces[k]!;
          expect(p.end).toBeGreaterThan(p.start);
          if (k > 0) {
            expect(p.start).toBe(pieces[k - 1]!.end);
            expect(p.status).not.toBe(pieces[k - 1]!.status);
          }
          for (let t = p.start; t < p.end; t++) expect(busyCells[t]).toBe(p.status === "busy");
        }
      }),
    );
  });
});

describe("gridStarts", () => {
  it("lists the quarter hours at which a meeting still fits", () => {
    const starts = gridStarts(iv(utc("2026-03-02T09:07:00Z"), utc("2026-03-02T10:15:00Z")), 15, 30 * MIN, "UTC");
    expect(starts.map((s) => new Date(s).toISOString())).toEqual([
      "2026-03-02T09:15:00.000Z",
      "2026-03-02T09:30:00.000Z",
      "2026-03-02T09:45:00.000Z",
    ]);
  });

  it("is empty when the window is shorter than the meeting", () => {
    expect(gridStarts(iv(0, 20 * MIN), 15, 30 * MIN, "UTC")).toEqual([]);
  });

  it("follows the local clock: hourly steps in Asia/Kolkata (+05:30) fall on UTC half hours", () => {
    const starts = gridStarts(iv(utc("2026-03-02T03:00:00Z"), utc("2026-03-02T06:00:00Z")), 60, 60 * MIN, "Asia/Kolkata");
    expect(starts.map((s) => new Date(s).toISOString())).toEqual(["2026-03-02T03:30:00.000Z", "2026-03-02T04:30:00.000Z"]);
  });

  it("follows the new offset after Lord Howe's 30-minute shift (hourly steps, 2026-10-04)", () => {
    // 02:00 LHST (+10:30) = 15:30Z becomes 02:30 LHDT (+11:00). Local full hours:
    // 01:00 LHST = 14:30Z, then 03:00 LHDT = 16:00Z, 04:00 LHDT = 17:00Z.
    const starts = gridStarts(iv(utc("2026-10-03T14:00:00Z"), utc("2026-10-03T17:30:00Z")), 60, 30 * MIN, "Australia/Lord_Howe");
    expect(starts.map((s) => new Date(s).toISOString())).toEqual([
      "2026-10-03T14:30:00.000Z",
      "2026-10-03T16:00:00.000Z",
      "2026-10-03T17:00:00.000Z",
    ]);
  });

  const zones = ["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata", "Asia/Kathmandu", "Pacific/Chatham"];
  it("gives every local-clock grid point with room for the meeting, and nothing else (property)", () => {
    const base = utc("2026-01-01T00:00:00Z");
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.integer({ min: 0, max: 364 * 24 * 60 }),
        fc.integer({ min: 0, max: 26 * 60 }),
        fc.constantFrom(15, 30, 60),
        fc.constantFrom(15, 30, 45, 60, 90, 120),
        (zone, startMinute, lengthMinutes, step, durationMinutes) => {
          const window = iv(base + startMinute * MIN, base + (startMinute + lengthMinutes) * MIN);
          const starts = gridStarts(window, step, durationMinutes * MIN, zone);
          const expected: number[] = [];
          for (let t = window.start; t + durationMinutes * MIN <= window.end; t += MIN) {
            const local = DateTime.fromMillis(t, { zone });
            if ((local.hour * 60 + local.minute) % step === 0) expected.push(t);
          }
          expect(starts).toEqual(expected);
        },
      ),
      { numRuns: 60 },
    );
  });
});
