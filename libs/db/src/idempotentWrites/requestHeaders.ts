import { checkIdempotencyKey } from "@sched/errors";
import { IDEMPOTENCY_FINGERPRINT_HEADER, IDEMPOTENCY_HEADER } from "@sched/proto";

type Headers = Readonly<Record<string, string>>;

/** The Idempotency-Key header of a request, if any; a bad value is a 400 naming the header. */
export function readIdempotencyKey(headers: Headers): string | undefined {
  const value = headerOf(headers, IDEMPOTENCY_HEADER);
  return value === undefined ? undefined : checkIdempotencyKey(value);
}

/** The request fingerprint the gateway computed at the edge, if the request came through one that sends it. */
export function readGatewayFingerprint(headers: Headers): string | undefined {
  return headerOf(headers, IDEMPOTENCY_FINGERPRINT_HEADER);
}

/** A header's value whatever the case of its name: NATS and the in-process bus keep names as they were sent. */
function headerOf(headers: Headers, name: string): string | undefined {
  if (headers[name] !== undefined) return headers[name];
  const lower = name.toLowerCase();
  const found = Object.keys(headers).find((h) => h.toLowerCase() === lower);
  return found === undefined ? undefined : headers[found];
}
