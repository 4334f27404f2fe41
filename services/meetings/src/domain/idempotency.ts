import { AppError } from "@sched/errors";
import { createHash } from "node:crypto";

export const IDEMPOTENCY_HEADER = "Idempotency-Key";
const PRINTABLE_KEY = /^[\x20-\x7E]{1,255}$/;

/** The Idempotency-Key header of a request, if any; a bad value is a 400 naming the header. */
export function readIdempotencyKey(headers: Readonly<Record<string, string>>): string | undefined {
  const name = Object.keys(headers).find((h) => h.toLowerCase() === IDEMPOTENCY_HEADER.toLowerCase());
  if (name === undefined) return undefined;
  const value = headers[name]!;
  if (!PRINTABLE_KEY.test(value)) {
    throw new AppError("invalid_request", `Invalid ${IDEMPOTENCY_HEADER}: must be 1 to 255 printable ASCII characters.`, {
      param: IDEMPOTENCY_HEADER,
    });
  }
  return value;
}

/** JSON with object keys sorted at every level: equal values give equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * What makes two requests "the same" for an idempotency key: method, path and
 * the validated body (so key order and e-mail case do not matter).
 */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash("sha256").update(`${method} ${path}\n${canonicalJson(body)}`).digest("hex");
}
