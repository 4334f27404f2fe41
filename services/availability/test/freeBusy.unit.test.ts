import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { freeBusy } from "../src/domain/freeBusy.js";
import { isMerged, type Interval } from "../src/domain/intervals.js";

const H = 3_600_000;
const T0 = Date.UTC(2030, 2, 4);
const at = (hours: number) => T0 + hours * H;

const interval = fc.tuple(fc.integer({ min: -48, max: 24 * 40 }), fc.integer({ min: 1, max: 48 })).map(([start, length]): Interval => ({ start: at(start / 4), end: at((start + length) / 4) }));

describe("free-busy", () => {
  it("lists visible people in the order asked, merged and cut to the window, and the others as not visible", () => {
    const answer = freeBusy({
      window: { start: at(0), end: at(24) },
      listed: ["cy@example.com", "ann@example.com", "bo@example.com"],
      visible: new Map([
        ["ann@example.com", "usr_ann"],
        ["bo@example.com", "usr_bo"],
      ]),
      busy: new Map([
        ["usr_ann", [{ start: at(9), end: at(10) }, { start: at(-2), end: at(1) }, { start: at(9.5), end: at(11) }, { start: at(11), end: at(12) }, { start: at(23), end: at(30) }]],
        ["usr_cy", [{ start: at(9), end: at(10) }]],
      ]),
      incomplete: new Set(["usr_bo"]),
    });
    expect(answer.notVisible).toEqual(["cy@example.com"]);
    expect(answer.people).toEqual([
      { email: "ann@example.com", busy: [{ start: at(0), end: at(1) }, { start: at(9), end: at(12) }, { start: at(23), end: at(24) }], busyComplete: true },
      { email: "bo@example.com", busy: [], busyComplete: false, missingCalendars: [] },
    ]);
  });

  it("drops fractions of a second from the window", () => {
    const answer = freeBusy({ window: { start: at(0) + 400, end: at(1) + 999 }, listed: [], visible: new Map(), busy: new Map(), incomplete: new Set() });
    expect(answer.window).toEqual({ start: at(0), end: at(1) });
  });

  it("is merged, inside the window, and covers exactly the busy time inside it", () => {
    fc.assert(
      fc.property(fc.array(interval, { maxLength: 60 }), fc.integer({ min: 0, max: 24 * 20 }), fc.integer({ min: 1, max: 24 * 31 }), (busy, from, hours) => {
        const window = { start: at(from), end: at(from + hours) };
        const [person] = freeBusy({ window, listed: ["a@example.com"], visible: new Map([["a@example.com", "u"]]), busy: new Map([["u", busy]]), incomplete: new Set() }).people;
        const out = person!.busy;
        if (!isMerged(out)) return false;
        if (out.some((i) => i.start < window.start || i.end > window.end)) return false;
        // Every quarter hour inside the window is busy in the answer exactly when some input interval covers it.
        for (let q = window.start; q < window.end; q += H / 4) {
          const inInput = busy.some((i) => i.start <= q && q < i.end);
          const inOutput = out.some((i) => i.start <= q && q < i.end);
          if (inInput !== inOutput) return false;
        }
        return true;
      }),
      { numRuns: 300 },
    );
  });
});
