import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatTimestamp, parseTimestamp } from "../src/inbound/deps.js";

describe("timestamps on the bus", () => {
  it("formats in UTC to whole seconds, dropping (never rounding) the fraction", () => {
    expect(formatTimestamp(Date.parse("2026-03-29T01:30:00.999Z"))).toBe("2026-03-29T01:30:00Z");
    expect(formatTimestamp(Date.parse("0999-12-31T23:59:59Z"))).toBe("0999-12-31T23:59:59Z");
  });

  it("reads back exactly what Date.parse reads, for every instant of years 1000–9999", () => {
    const instant = fc.integer({ min: Date.parse("1000-01-01T00:00:00Z"), max: Date.parse("9999-12-31T23:59:59Z") });
    fc.assert(
      fc.property(instant, (t) => {
        const text = formatTimestamp(t);
        expect(parseTimestamp(text)).toBe(Date.parse(text));
        expect(parseTimestamp(text)).toBe(Math.floor(t / 1000) * 1000);
      }),
      { numRuns: 2000 },
    );
  });
});
