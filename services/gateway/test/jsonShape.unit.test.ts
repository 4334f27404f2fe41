import { describe, expect, it } from "vitest";
import { jsonTextShape, nonFiniteNumberAt } from "../src/domain/jsonShape.js";

const bytes = (text: string) => Buffer.from(text, "utf8");
const nestsDeeperThan = (text: Uint8Array, maxDepth: number) => jsonTextShape(text, maxDepth).nestsTooDeep;
const mayHoldNonFiniteNumber = (text: string) => jsonTextShape(bytes(text), 64).mayHoldNonFiniteNumber;

describe("how deep a JSON text nests", () => {
  it("counts arrays and objects alike, up to the limit and past it", () => {
    expect(nestsDeeperThan(bytes('{"a":[{"b":[1]}]}'), 4)).toBe(false);
    expect(nestsDeeperThan(bytes('{"a":[{"b":[1]}]}'), 3)).toBe(true);
    expect(nestsDeeperThan(bytes("[[],[],[[]]]"), 3)).toBe(false);
    expect(nestsDeeperThan(bytes("[[],[],[[]]]"), 2)).toBe(true);
    expect(nestsDeeperThan(bytes("[[],[],[[[]]]]"), 3)).toBe(true);
  });

  it("does not count brackets inside strings, escaped quotes included", () => {
    expect(nestsDeeperThan(bytes(`{"email":"${"[".repeat(100)}"}`), 1)).toBe(false);
    expect(nestsDeeperThan(bytes(`{"a":"\\"[[[[","b":"\\\\"}`), 1)).toBe(false);
    expect(nestsDeeperThan(bytes(`{"a":"\\\\",  "b":[[1]]}`), 2)).toBe(true);
  });

  it("reads thousands of levels without recursing", () => {
    const deep = `{"email":${"[".repeat(100_000)}${"]".repeat(100_000)}}`;
    expect(nestsDeeperThan(bytes(deep), 32)).toBe(true);
  });

  it("passes scalars and bodies of non-ASCII text", () => {
    expect(nestsDeeperThan(bytes('"ü{["'), 0)).toBe(false);
    expect(nestsDeeperThan(bytes("42"), 0)).toBe(false);
  });
});

describe("whether JSON text may hold a number that is not finite", () => {
  it("says so for an exponent, in either case and after a fraction, and for a run of more digits than a finite number needs", () => {
    expect(mayHoldNonFiniteNumber('{"a":1e309}')).toBe(true);
    expect(mayHoldNonFiniteNumber('{"a":[2.5E+3]}')).toBe(true);
    expect(mayHoldNonFiniteNumber(`{"a":-${"9".repeat(309)}}`)).toBe(true);
    expect(mayHoldNonFiniteNumber(`{"a":${"9".repeat(309)}.5}`)).toBe(true);
  });

  it("clears text whose numbers are all short and plain, whatever its strings and literals hold", () => {
    expect(mayHoldNonFiniteNumber(`{"a":${"9".repeat(308)}.${"5".repeat(308)},"b":-0.25}`)).toBe(false);
    expect(mayHoldNonFiniteNumber('{"duration":"1e309","t":true,"f":false,"n":null,"x":"\\"}')).toBe(false);
    expect(mayHoldNonFiniteNumber(`{"e":"${"9".repeat(400)}","ok":[true,false,12]}`)).toBe(false);
  });

  it("reads the whole text, a scalar too", () => {
    expect(mayHoldNonFiniteNumber(`[[["x"]],{"late":7E400}]`)).toBe(true);
    expect(mayHoldNonFiniteNumber("1e999")).toBe(true);
    expect(mayHoldNonFiniteNumber("42")).toBe(false);
  });
});

describe("where a parsed body holds a number that is not finite", () => {
  it("names the first such field in document order", () => {
    expect(nonFiniteNumberAt({ rateLimits: { standardPerMinute: Infinity, aiPerMinute: -Infinity } })).toEqual(["rateLimits", "standardPerMinute"]);
    expect(nonFiniteNumberAt({ a: [1, 2, { b: -Infinity }] })).toEqual(["a", 2, "b"]);
    expect(nonFiniteNumberAt(Infinity)).toEqual([]);
  });

  it("finds nothing when every number is finite", () => {
    expect(nonFiniteNumberAt({ a: [1, 1e308, -0, null, "Infinity"], b: { c: true } })).toBeUndefined();
    expect(nonFiniteNumberAt(undefined)).toBeUndefined();
  });
});
