import { randomInt } from "node:crypto";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** A random string of base62 characters from the CSPRNG. */
export function randomBase62(length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
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
