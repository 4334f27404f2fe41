import { randomFillSync } from "node:crypto";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/** The alphabet's character codes, indexed as the alphabet. */
const CODES = Buffer.from(ALPHABET, "latin1");
/** Random bytes below this (4 × 62) map evenly onto the alphabet; the rest are skipped, so every character is equally likely. */
const EVEN_BELOW = 248;
/**
 * CSPRNG bytes drawn a few thousand at a time (node's randomInt caches 6 KiB,
 * randomUUID 2 KiB) and used once each. A draw costs about as much for 4096
 * bytes as for 512 (some 8 µs, nearly all of it the call): at 512 a refill
 * came every 20 ids, several µs of every create.
 */
const pool = Buffer.alloc(4096);
let poolAt = pool.length;
/** Where an id's characters are put together before they become one string. */
let chars = Buffer.alloc(64);

function randomByte(): number {
  if (poolAt === pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  return pool[poolAt++]!;
}

/**
 * A random string of base62 characters from the CSPRNG. Made as one string
 * from a buffer: appending a character at a time left a string a character
 * behind each (a request id was several hundred bytes of garbage).
 */
export function randomBase62(length: number): string {
  if (chars.length < length) chars = Buffer.alloc(length);
  for (let i = 0; i < length; i++) {
    let byte = randomByte();
    while (byte >= EVEN_BELOW) byte = randomByte();
    chars[i] = CODES[byte % ALPHABET.length]!;
  }
  return chars.toString("latin1", 0, length);
}

export type IdPrefix = "mtg" | "ctc" | "usr" | "key" | "req" | "cal" | "evt" | "whe" | "whd" | "off";

/** A public identifier: prefix, underscore, 24 base62 characters. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(24)}`;
}

/** Whether `value` has the exact shape of an id with this prefix. */
export function isId(prefix: IdPrefix, value: string): boolean {
  return new RegExp(`^${prefix}_[0-9A-Za-z]{24}$`).test(value);
}
