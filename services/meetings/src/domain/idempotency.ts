import { AppError } from "@sched/errors";
import { IDEMPOTENCY_HEADER, IDEMPOTENCY_KEY_FORMAT } from "@sched/proto";

export { IDEMPOTENCY_HEADER, canonicalJson, requestFingerprint } from "@sched/proto";

/** The Idempotency-Key header of a request, if any; a bad value is a 400 naming the header. */
export function readIdempotencyKey(headers: Readonly<Record<string, string>>): string | undefined {
  const name = Object.keys(headers).find((h) => h.toLowerCase() === IDEMPOTENCY_HEADER.toLowerCase());
  if (name === undefined) return undefined;
  const value = headers[name]!;
  if (!IDEMPOTENCY_KEY_FORMAT.test(value)) {
    throw new AppError("invalid_request", `Invalid ${IDEMPOTENCY_HEADER}: must be 1 to 255 printable ASCII characters.`, {
      param: IDEMPOTENCY_HEADER,
    });
  }
  return value;
}
