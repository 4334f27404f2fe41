import { ERROR_STATUS, IDEMPOTENCY_HEADER, IDEMPOTENCY_KEY_FORMAT, isErrorCode, type ErrorCode } from "@sched/proto";
import type { z } from "zod";

export { currentDeadline, remainingMs, withDeadline } from "./deadline.js";
export { isBackingServiceUnavailable } from "./unavailable.js";

/** The one error type of the system: an API error code, its status and a message safe to show. */
export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: { param?: string; retryAfterSeconds?: number; allow?: string[] } = {},
  ) {
    super(message);
    this.name = "AppError";
    this.status = ERROR_STATUS[code];
  }

  /** The wire form used on the bus. */
  toJSON(): { code: ErrorCode; message: string; param?: string; retryAfterSeconds?: number } {
    const { param, retryAfterSeconds } = this.details;
    return { code: this.code, message: this.message, ...(param ? { param } : {}), ...(retryAfterSeconds ? { retryAfterSeconds } : {}) };
  }

  static fromJSON(value: unknown): AppError {
    const v = (value ?? {}) as { code?: unknown; message?: unknown; param?: unknown; retryAfterSeconds?: unknown };
    if (typeof v.code === "string" && isErrorCode(v.code)) {
      return new AppError(v.code, typeof v.message === "string" ? v.message : v.code, {
        ...(typeof v.param === "string" ? { param: v.param } : {}),
        ...(typeof v.retryAfterSeconds === "number" ? { retryAfterSeconds: v.retryAfterSeconds } : {}),
      });
    }
    return internalError();
  }
}

export const notFound = (what = "resource"): AppError => new AppError("not_found", `No such ${what}.`);
export const internalError = (): AppError => new AppError("internal_error", "An internal error occurred.");
export const unavailable = (retryAfterSeconds = 1): AppError =>
  new AppError("service_unavailable", "A backing service did not answer in time; retry shortly.", { retryAfterSeconds });
/** The request's deadline passed before it could be served: its requester has given up on it. */
export const deadlinePassed = (): AppError =>
  new AppError("service_unavailable", "The request's deadline passed before it could be served; retry shortly.", { retryAfterSeconds: 1 });

/** The Idempotency-Key header's value when it is well formed; a 400 naming the header otherwise. */
export function checkIdempotencyKey(value: string): string {
  if (!IDEMPOTENCY_KEY_FORMAT.test(value)) {
    throw new AppError("invalid_request", `Invalid ${IDEMPOTENCY_HEADER}: must be 1 to 255 printable ASCII characters.`, { param: IDEMPOTENCY_HEADER });
  }
  return value;
}
export const idempotencyKeyReused = (): AppError =>
  new AppError("idempotency_key_reused", "This Idempotency-Key was already used with a different request.");
/** `retryAfterMs`: how long until the first request's claim on the key has expired at the latest. */
export const idempotencyInProgress = (retryAfterMs: number): AppError =>
  new AppError("idempotency_request_in_progress", "A request with this Idempotency-Key is still being processed; retry shortly.", {
    retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1_000)),
  });

/** Formats a zod issue path as the public `param` (`participants[2]`, `workingHours[0].start`). */
export function paramName(path: ReadonlyArray<PropertyKey>): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}

/**
 * Turns the first validation issue into a 400 naming the field. HTTP route
 * payloads are `{params, query, body}`; that first level is not part of the
 * public name of a field.
 */
export function invalidRequest(error: z.ZodError, options: { httpEnvelope?: boolean } = {}): AppError {
  const issue = error.issues[0];
  if (!issue) return new AppError("invalid_request", "The request is invalid.");
  let path: PropertyKey[] = [...issue.path];
  if (options.httpEnvelope && ["params", "query", "body"].includes(String(path[0]))) path = path.slice(1);
  if (issue.code === "unrecognized_keys" && issue.keys.length > 0) path = [...path, issue.keys[0]!];
  // A problem with the body as a whole (empty PATCH, missing body) is named "body".
  const param = paramName(path) || "body";
  return new AppError("invalid_request", describeIssue(issue, param), { param });
}

function describeIssue(issue: z.core.$ZodIssue, where: string): string {
  switch (issue.code) {
    case "unrecognized_keys":
      return `Unknown parameter: ${where}.`;
    case "invalid_type":
      if (issue.input === undefined) return `Missing required parameter: ${where}.`;
      return `Invalid ${where}: expected ${issue.expected}.`;
    default:
      return `Invalid ${where}: ${issue.message}.`.replace(/\.\.$/, ".");
  }
}
