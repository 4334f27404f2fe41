import { checkIdempotencyKey } from "@sched/errors";
import { IDEMPOTENCY_HEADER } from "@sched/proto";

/** The Idempotency-Key header of a request, if any; a bad value is a 400 naming the header. */
export function readIdempotencyKey(headers: Readonly<Record<string, string>>): string | undefined {
  const name = Object.keys(headers).find((h) => h.toLowerCase() === IDEMPOTENCY_HEADER.toLowerCase());
  return name === undefined ? undefined : checkIdempotencyKey(headers[name]!);
}
