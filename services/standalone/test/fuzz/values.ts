import fc from "fast-check";

/**
 * A JSON fragment written as it is: what JSON.stringify cannot produce
 * (`1e309`, `-0`, integers past 2^53, nesting deeper than the stack) or what
 * would overflow this process's own stack if it were built as a value.
 */
export class RawJson {
  constructor(readonly text: string) {}
}

/** A generated JSON value whose leaves may be raw fragments. */
export type FuzzJson = RawJson | null | boolean | number | string | FuzzJson[] | { [key: string]: FuzzJson };

/** The JSON text of a generated value; object keys keep their order, raw fragments go in verbatim. */
export function jsonText(value: FuzzJson): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(jsonText).join(",")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${jsonText(v)}`)
      .join(",")}}`;
  }
  return JSON.stringify(value);
}

const raw = (text: string) => new RawJson(text);

/** Numbers at and past every boundary a parser, a validator or a database column has. */
const nastyNumber: fc.Arbitrary<FuzzJson> = fc.oneof(
  fc.constantFrom(
    raw("1e309"),
    raw("-1e309"),
    raw("1e-400"),
    raw("-0"),
    raw("0.0"),
    raw("1.0"),
    raw("1E2"),
    raw("9007199254740993"),
    raw("123456789012345678901234567890"),
    raw(`1${"0".repeat(400)}`),
    raw("0.1e1"),
    0,
    -1,
    0.5,
    1.5,
    2 ** 31,
    -(2 ** 31) - 1,
    2 ** 53,
    Number.MAX_SAFE_INTEGER,
    Number.MIN_SAFE_INTEGER,
    Number.MAX_VALUE,
    Number.MIN_VALUE,
    1e21,
  ),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Control characters, NUL and unpaired surrogates (the ones storage chokes on most often), and other characters that need care. */
const awkwardChar = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom("\u0000", "\ud800", "\udfff", "\udbff") },
  { weight: 3, arbitrary: fc.constantFrom("\u0001", "\u0007", "\b", "\t", "\n", "\r", "\u001b", "\u001f", "\u007f", "\u0085", "\u00a0", "\u2028", "\u2029", "\ufeff", "\uffff", "\u202e", "\u0301", "😀", "\\", '"', "'", "%", "/") },
);

/** Strings a client should never be able to turn into a 500. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.tuple(fc.string({ maxLength: 8 }), awkwardChar, fc.string({ maxLength: 8 })).map(([a, c, b]) => `${a}${c}${b}`) },
  fc.constantFrom(
    "",
    " ",
    "   ",
    "\u0000",
    "a\u0000b",
    "\ud800",
    "x\udc00y",
    "null",
    "undefined",
    "NaN",
    "true",
    "__proto__",
    "constructor",
    "'; drop table meetings; --",
    "%00",
    "%s%n%x",
    "../../etc/passwd",
    "<script>alert(1)</script>",
    "${7*7}",
    "\u202egnp.exe",
    "Z̸̢͉̄a̵͔̓l̶̦̀g̷̰͋o̷͚̍",
  ),
  fc.string({ unit: "binary", maxLength: 30 }),
  fc.tuple(fc.constantFrom("a", "é", "😀", "\u0000", " "), fc.constantFrom(199, 200, 201, 254, 255, 256, 1_000, 10_000, 20_000, 120_000)).map(([c, n]) => c.repeat(n)),
);

/** Dates and datetimes at the ends of the calendar, in the gaps of time zones and just past validity. */
export const extremeDate: fc.Arbitrary<string> = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom("0000-01-01", "9999-12-30", "9999-12-31", "10000-01-01", "9999-12-31T23:30:00", "9999-12-31T23:59:59Z", "0000-01-01T00:00:00Z") },
  fc.constantFrom(
    "0000-01-01",
    "0001-01-01",
    "9999-12-31",
    "10000-01-01",
    "1969-12-31",
    "1970-01-01",
    "2026-02-29",
    "2028-02-29",
    "2026-02-30",
    "2026-13-01",
    "2026-00-10",
    "+275760-09-13",
    "-000001-01-01",
    "0000-01-01T00:00:00Z",
    "0000-01-01T00:00:00",
    "0001-01-01T00:00:00+14:00",
    "9999-12-31T23:59:59Z",
    "9999-12-31T23:30:00",
    "9999-12-31T23:59:59-12:00",
    "10000-01-01T00:00:00Z",
    "2026-03-29T02:30:00",
    "2026-10-25T02:30:00",
    "2026-11-01T01:30:00",
    "2026-01-01T24:00:00",
    "2026-01-01T23:59:60Z",
    "2026-01-01T10:00:00+99:99",
    "2026-01-01T10:00:00+2400",
    "2026-01-01T10:00:00.123456789012345678Z",
    "2026-01-01T10:00",
    "2026-01-01T10:00:00,5-03",
  ),
  fc.tuple(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 32 })).map(
    ([y, m, d]) => `${String(y).padStart(4, "0")}-${String(m).padStart(2, "0")}-${String(d).padStart(2, "0")}`,
  ),
  fc.date({ min: new Date(Date.UTC(0, 0, 1)), max: new Date(Date.UTC(9999, 11, 31, 23, 59, 59)), noInvalidDate: true }).map((d) => d.toISOString().replace(/\.\d{3}Z$/, "Z")),
);

/** Values of every other JSON type, for a field that expects one in particular. */
const wrongType: fc.Arbitrary<FuzzJson> = fc.oneof(
  fc.constantFrom<FuzzJson>(null, true, false, [], {}, [null], raw('{"__proto__":{"polluted":true}}'), raw('{"constructor":{"prototype":{"x":1}}}')),
  fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<FuzzJson>,
);

/** A value nested deeper than any stack: as an array or an object, with the depth near and far past a parser's limit. */
export const deepNesting: fc.Arbitrary<FuzzJson> = fc
  .tuple(fc.constantFrom(64, 1_000, 5_000, 20_000, 45_000), fc.constantFrom("array", "object"))
  .map(([depth, kind]) => (kind === "array" ? raw(`${"[".repeat(depth)}${"]".repeat(depth)}`) : raw(`${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`)));

/** Any of the above, for a field of any type. */
export const mutant: fc.Arbitrary<FuzzJson> = fc.oneof(
  { weight: 3, arbitrary: nastyString },
  { weight: 2, arbitrary: nastyNumber },
  { weight: 2, arbitrary: extremeDate },
  { weight: 2, arbitrary: wrongType },
  { weight: 1, arbitrary: deepNesting },
);

/** E-mail addresses at the edges of validity. */
export const nastyEmail: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom("a@b", "@example.com", "a@", "a@@example.com", "A@EXAMPLE.COM", " a@example.com ", "a\u0000@example.com", "ü@exämple.com", '"a b"@example.com', "a@[127.0.0.1]", "a+tag@example.com"),
  fc.constantFrom(64, 65, 250, 255, 10_000).map((n) => `${"a".repeat(n)}@example.com`),
  fc.emailAddress(),
);
