import { randomBase62 } from "@sched/ids";
import { createHash, timingSafeEqual } from "node:crypto";

/** A new secret token with a prefix saying what it is: 43 base62 characters hold 256 bits. */
export function newSecret(prefix: "sil" | "ses" | "csrf"): string {
  return `${prefix}_${randomBase62(43)}`;
}

/** What is stored of a secret: its SHA-256, in hex. */
export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/** Compares two secrets in time that does not depend on where they first differ. */
export function secretsMatch(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
