import type { Answer } from "./attempts.js";

/**
 * Whether a correct client sends the request again, unchanged and with the
 * same Idempotency-Key: the answer says nothing was decided (503, 409 in
 * progress, 429) or nothing arrived (timeout, lost connection). A 5xx is
 * retried too: with the key a second try cannot write twice.
 */
export function worthRetrying(answer: Answer): boolean {
  if (typeof answer !== "number") return true;
  return answer === 409 || answer === 429 || answer >= 500;
}

const FIRST_BACKOFF_MS = 200;
const LONGEST_BACKOFF_MS = 2_000;

/** The wait before try number `tries + 1`: what Retry-After asks, else a back-off doubling from 200 ms to 2 s. */
export function retryDelayMs(retryAfter: string | undefined, tries: number): number {
  const seconds = retryAfter === undefined ? Number.NaN : Number(retryAfter);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1_000;
  return Math.min(LONGEST_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** Math.max(0, tries - 1));
}
