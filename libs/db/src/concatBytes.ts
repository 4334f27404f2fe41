/**
 * Byte arrays one after the other in one array: the one given when there is only one, else a
 * new array of its own. Imports nothing, so the embedded database's thread loads it as it is.
 */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const whole = new Uint8Array(parts.reduce((length, part) => length + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    whole.set(part, offset);
    offset += part.length;
  }
  return whole;
}
