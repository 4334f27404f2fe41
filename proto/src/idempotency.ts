import { createHash } from "node:crypto";

/** The request header of api-decisions part 5, on every public POST. */
export const IDEMPOTENCY_HEADER = "Idempotency-Key";
/** 1 to 255 printable ASCII characters. */
export const IDEMPOTENCY_KEY_FORMAT = /^[\x20-\x7E]{1,255}$/;
/** The answer header of a replayed response. */
export const IDEMPOTENT_REPLAYED_HEADER = "Idempotent-Replayed";
/** How long a key is remembered (api-decisions part 5). */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;
/**
 * A request's claim on its key expires this long after the request's
 * deadline, in the gateway and in the service alike: a request that died
 * mid-flight blocks a retry with the key no longer than that.
 */
export const IDEMPOTENCY_CLAIM_MARGIN_MS = 1_000;

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
 * body, with key order not mattering. Keys are per API key across all
 * endpoints, so the same key on another path is another request.
 */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash("sha256").update(`${method} ${path}\n${canonicalJson(body)}`).digest("hex");
}
