const OPEN_OBJECT = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE_OBJECT = 0x7d; // }
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \

/**
 * Whether JSON text nests arrays and objects deeper than `maxDepth`, read
 * byte by byte without parsing it: everything that walks a parsed value
 * (re-encoding, fingerprints) recurses once per level, so the depth is
 * bounded before any of them runs. Brackets inside strings do not count;
 * text that is not valid JSON is judged by its brackets only (the parser
 * refuses it anyway). UTF-8 never uses these bytes inside a multi-byte
 * character, so bytes are enough.
 */
export function nestsDeeperThan(text: Uint8Array, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const byte = text[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      if (++depth > maxDepth) return true;
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      depth--;
    }
  }
  return false;
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
