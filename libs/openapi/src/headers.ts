import { ERROR_STATUS, type RouteDef } from "@sched/proto";
import { EDGE_CODES } from "./errorCodes.js";

export type HeaderObject = {
  description: string;
  required: boolean;
  schema: { type: "string" | "integer"; minimum?: number; const?: string };
  example?: string | number;
};

export type HeaderParameter = {
  name: string;
  in: "header";
  description: string;
  required: false;
  schema: { type: "string"; minLength?: number; maxLength?: number; pattern?: string };
  example?: string;
};

/** Request headers every operation, or every idempotent one, accepts (component name → parameter). */
export const HEADER_PARAMETERS: Record<"RequestId" | "IdempotencyKey", HeaderParameter> = {
  RequestId: {
    name: "X-Request-Id",
    in: "header",
    description:
      "Your id for this request, echoed in the `X-Request-Id` response header and in `error.requestId` when it is a token of at most 128 characters of `[A-Za-z0-9._:-]`; otherwise a generated `req_…` id is used instead.",
    required: false,
    schema: { type: "string" },
    example: "checkout-7f3a9c",
  },
  IdempotencyKey: {
    name: "Idempotency-Key",
    in: "header",
    description:
      "Makes the POST safe to retry: the same key with the same body within 24 hours answers the first response again (status and body, with `Idempotent-Replayed: true`) and changes nothing. The same key with another body, or on another endpoint, is 422 `idempotency_key_reused`; while the first request is still running, 409 `idempotency_request_in_progress` with `Retry-After`; a request that dies mid-flight frees its key by its deadline plus one second. Keys are per API key.",
    required: false,
    schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x20-\\x7E]+$" },
    example: "3f1c2b9e-0d4a-4c57-9e1b-6a8f2d7c5e10",
  },
};

/** What decides a response's headers: how the operation authenticates (`none`: not at all), its bucket, idempotency. */
export type HeaderContext = Pick<RouteDef, "bucket" | "idempotent"> & { auth: RouteDef["auth"] | "none" };

const header = (description: string, required: boolean, schema: HeaderObject["schema"], example: string | number): HeaderObject => ({
  description,
  required,
  schema,
  example,
});

const LIMIT = "Requests allowed per window in the operation's bucket.";
const REMAINING = "Requests left in the current window; 0 when limited.";
const RESET = "Unix time, in seconds, at which the current window ends.";
const MAYBE = " Missing when the request was refused before it was counted.";
const count = { type: "integer", minimum: 0 } as const;

/** Response headers, by component name. A `$ref` cannot say `required`, hence the optional twins. */
export const HEADER_COMPONENTS = {
  RequestId: header("The request's id: yours when it was sane, otherwise a generated `req_…`.", true, { type: "string" }, "req_8ZtV2pQ5xN1mK7wR4cL9bY3e"),
  RateLimitLimit: header(LIMIT, true, count, 100),
  RateLimitRemaining: header(REMAINING, true, count, 97),
  RateLimitReset: header(RESET, true, count, 1893456060),
  RateLimitLimitIfCounted: header(LIMIT + MAYBE, false, count, 100),
  RateLimitRemainingIfCounted: header(REMAINING + MAYBE, false, count, 0),
  RateLimitResetIfCounted: header(RESET + MAYBE, false, count, 1893456060),
  RetryAfter: header("Seconds to wait before retrying, at least 1.", true, { type: "integer", minimum: 1 }, 42),
  RetryAfterIfInProgress: header(
    "With `idempotency_request_in_progress`: seconds until the first request's claim on the Idempotency-Key has expired at the latest, at least 1.",
    false,
    { type: "integer", minimum: 1 },
    6,
  ),
  Location: header("Where the browser goes next.", true, { type: "string" }, "https://sched.example.com/dashboard/calendars?consent=connected&provider=google"),
  IdempotentReplayed: header("`true` when this is the stored answer of an earlier request with the same Idempotency-Key.", false, { type: "string", const: "true" }, "true"),
} satisfies Record<string, HeaderObject>;

/** Statuses a request may get before it is counted. */
const MAYBE_UNCOUNTED = new Set([...EDGE_CODES.map((code) => ERROR_STATUS[code]), 429, 500, 503]);

const ref = (name: keyof typeof HEADER_COMPONENTS) => ({ $ref: `#/components/headers/${name}` });

/**
 * The headers of one response (api-decisions 1 and 9): every response has
 * X-Request-Id; every response of an API-key operation that passed
 * authentication has the X-RateLimit-* headers; 429 and 503 add Retry-After,
 * and so does a 409 of an idempotent operation when it is
 * idempotency_request_in_progress.
 * Where a status can also come before the request was counted (the edge's
 * refusals, a 429 for failed authentications, a 500 or 503 from the key
 * check itself), the rate-limit headers may be missing.
 */
export function responseHeaders(route: HeaderContext, status: number): Record<string, { $ref: string }> {
  const headers: Record<string, { $ref: string }> = { "X-Request-Id": ref("RequestId") };
  if (route.auth === "api-key" && status !== 401) {
    const counted = !MAYBE_UNCOUNTED.has(status);
    headers["X-RateLimit-Limit"] = ref(counted ? "RateLimitLimit" : "RateLimitLimitIfCounted");
    headers["X-RateLimit-Remaining"] = ref(counted ? "RateLimitRemaining" : "RateLimitRemainingIfCounted");
    headers["X-RateLimit-Reset"] = ref(counted ? "RateLimitReset" : "RateLimitResetIfCounted");
  }
  if (status === 429 || status === 503) headers["Retry-After"] = ref("RetryAfter");
  if (route.idempotent && status === 409) headers["Retry-After"] = ref("RetryAfterIfInProgress");
  if (route.idempotent && status >= 200 && status < 300) headers["Idempotent-Replayed"] = ref("IdempotentReplayed");
  return headers;
}
