const OPEN_OBJECT = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE_OBJECT = 0x7d; // }
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \

const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const LOWER_E = 0x65; // e
const UPPER_E = 0x45; // E
/** A number literal with more digits in a row than this may be past the largest double (1.8e308) without an exponent. */
const MOST_DIGITS_OF_A_FINITE_NUMBER = 308;

/** What a scan of JSON text tells before it is parsed. */
export interface JsonTextShape {
  /** Arrays and objects nest deeper than the depth asked about (the scan stops there). */
  nestsTooDeep: boolean;
  /**
   * A number is written with an exponent or with more digits in a row than a
   * finite one needs: only such a number can parse to ±Infinity, so without
   * one the parsed value need not be walked for them (`nonFiniteNumberAt`).
   */
  mayHoldNonFiniteNumber: boolean;
}

/**
 * Reads JSON text byte by byte without parsing it: whether it nests arrays
 * and objects deeper than `maxDepth` (everything that walks a parsed value,
 * re-encoding, fingerprints, recurses once per level, so the depth is
 * bounded before any of them runs) and whether a number in it might not be
 * finite. Brackets and digits inside strings do not count; text that is not
 * valid JSON is judged by its bytes only (the parser refuses it anyway).
 * UTF-8 never uses these bytes inside a multi-byte character, so bytes are
 * enough. Outside strings an `e` follows a digit only as an exponent (in
 * `true` and `false` it follows a letter).
 */
export function jsonTextShape(text: Uint8Array, maxDepth: number): JsonTextShape {
  let depth = 0;
  let inString = false;
  let digitsInARow = 0;
  let mayHoldNonFiniteNumber = false;
  for (let i = 0; i < text.length; i++) {
    const byte = text[i]!;
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
      continue;
    }
    if (byte >= DIGIT_0 && byte <= DIGIT_9) {
      if (++digitsInARow > MOST_DIGITS_OF_A_FINITE_NUMBER) mayHoldNonFiniteNumber = true;
      continue;
    }
    if ((byte === LOWER_E || byte === UPPER_E) && digitsInARow > 0) mayHoldNonFiniteNumber = true;
    digitsInARow = 0;
    if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      if (++depth > maxDepth) return { nestsTooDeep: true, mayHoldNonFiniteNumber };
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      depth--;
    }
  }
  return { nestsTooDeep: false, mayHoldNonFiniteNumber };
}

/**
 * Where a parsed JSON value holds a number that is not finite (`1e309`
 * parses to Infinity, which JSON cannot carry on: it would arrive as null),
 * as the path to it; undefined when every number is finite. Walks with its
 * own stack rather than recursing.
 */
export function nonFiniteNumberAt(value: unknown): PropertyKey[] | undefined {
  const pending: Array<{ value: unknown; path: PropertyKey[] }> = [{ value, path: [] }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const current = next.value;
    if (typeof current === "number" && !Number.isFinite(current)) return next.path;
    if (current === null || typeof current !== "object") continue;
    const entries: Array<[PropertyKey, unknown]> = Array.isArray(current) ? current.map((v, i) => [i, v]) : Object.entries(current);
    // Pushed in reverse, so the first offending field in document order is the one named.
    for (let i = entries.length - 1; i >= 0; i--) pending.push({ value: entries[i]![1], path: [...next.path, entries[i]![0]] });
  }
  return undefined;
}
