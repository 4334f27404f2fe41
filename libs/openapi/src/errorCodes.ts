import { ERROR_STATUS, ERRORS_SECTION, type ErrorCode, type RouteDef } from "@sched/proto";

/** What each code means, for the response descriptions. */
const MEANING: Record<ErrorCode, string> = {
  invalid_json: "the body is not JSON, or nests arrays and objects more than 32 levels deep (by default)",
  invalid_request: "validation failed; `param` names the field",
  meeting_ended: "the meeting has already ended",
  meeting_cancelled: "the meeting is cancelled",
  unauthorized: "the key (or admin token) is missing, malformed, unknown or revoked",
  forbidden: "the key lacks the scope (the message names it), or the caller may not do this to this resource",
  not_found: "no such resource for this caller (an id of the wrong shape included)",
  method_not_allowed: "known path, other method",
  contact_exists: "the e-mail address is already in the contacts",
  user_exists: "a user with this e-mail address exists",
  idempotency_request_in_progress: "a request with this Idempotency-Key is still being processed",
  request_timeout: "the request did not arrive in time (by default: headers within 10 s, the whole request within 30 s)",
  payload_too_large: "the body is over 100 KiB",
  uri_too_long: "the URL is over 8 KiB (by default)",
  headers_too_large: "the request line and headers are over 16 KiB (by default)",
  unsupported_media_type: "the body is not `application/json` (UTF-8)",
  idempotency_key_reused: "this Idempotency-Key was used with a different request",
  rate_limited: "the rate limit of the key (or of failed authentications from this address) is exceeded",
  internal_error: "a bug; the message holds no internals",
  service_unavailable: "a backing service did not answer in time, or the gateway is at capacity or this client has its share of it",
};

/** A message and param like the ones the API sends, for the examples. */
export const ERROR_SAMPLES: Record<ErrorCode, { message: string; param?: string }> = {
  invalid_json: { message: "The request body is not valid JSON." },
  invalid_request: { message: "Invalid participants[1]: must be a valid e-mail address.", param: "participants[1]" },
  meeting_ended: { message: "This meeting has already ended and can no longer be updated." },
  meeting_cancelled: { message: "This meeting has been cancelled and can no longer be updated." },
  unauthorized: { message: "Invalid API key." },
  forbidden: { message: "This API key lacks the required scope: meetings:write." },
  not_found: { message: "No such meeting." },
  method_not_allowed: { message: "PUT is not allowed on /v1/contacts." },
  contact_exists: { message: "This e-mail address is already in your contacts.", param: "email" },
  user_exists: { message: "A user with this e-mail address already exists.", param: "email" },
  idempotency_request_in_progress: { message: "A request with this Idempotency-Key is still being processed; retry shortly." },
  request_timeout: { message: "The request was not received in time." },
  payload_too_large: { message: "The request body is larger than 100 KiB." },
  uri_too_long: { message: "The URL is too long." },
  headers_too_large: { message: "The request headers are too large." },
  unsupported_media_type: { message: "Request bodies must be JSON, sent with Content-Type: application/json." },
  idempotency_key_reused: { message: "This Idempotency-Key was already used with a different request." },
  rate_limited: { message: "Too many requests: the rate limit for this API key is exceeded." },
  internal_error: { message: "An internal error occurred." },
  service_unavailable: { message: "A backing service did not answer in time; retry shortly." },
};

/** What a client does about each code, for the reference's section on it. */
const REMEDY: Record<ErrorCode, string> = {
  invalid_json: "Send a body that is UTF-8 JSON, nested at most as deep as the limit allows.",
  invalid_request:
    "Correct the field `param` names, as `message` describes, and send the request again. It is also the answer to a request that is not valid HTTP, or to an HTTP/1.1 request without `Host` (`param` is `Host`).",
  meeting_ended: "A meeting that has ended cannot be updated or cancelled; it can still be removed (`DELETE /v1/meetings/{id}`).",
  meeting_cancelled: "A cancelled meeting cannot be updated; create a new one instead.",
  unauthorized: "Send `Authorization: Bearer <API_KEY>` with a key that exists and is not revoked (for the admin API, the admin token). Repeated failures from one address are rate limited.",
  forbidden: "Use a key with the scope the message names. A browser's cross-origin request (`OPTIONS`) is always refused: keys are for servers.",
  not_found: "Check the path and the id. An object of another user, or of the other mode (test or live), is not found either.",
  method_not_allowed: "Use one of the methods the `Allow` header lists.",
  contact_exists: "The contact is already there: read it with `GET /v1/contacts` rather than adding it again.",
  user_exists: "A user with this e-mail address exists: look it up with `GET /admin/v1/users?email=…`.",
  idempotency_request_in_progress: "The first request with this `Idempotency-Key` is still being handled: retry after `Retry-After` seconds to get its answer.",
  request_timeout: "Send the whole request promptly; the connection is closed after this answer.",
  payload_too_large: "Send a smaller body.",
  uri_too_long: "Send a shorter URL: fewer or shorter query parameters.",
  headers_too_large: "Send fewer or smaller headers; the connection is closed after this answer.",
  unsupported_media_type: "Send the body as `Content-Type: application/json` (UTF-8).",
  idempotency_key_reused: "Use a new `Idempotency-Key` for a different request; reuse a key only to retry the very same request.",
  rate_limited: "Wait the `Retry-After` seconds; `X-RateLimit-Reset` says when the window ends.",
  internal_error: "Retry later; if it persists, report the `requestId`.",
  service_unavailable: "Retry after the `Retry-After` seconds. A request a service was handling may still have taken effect: retry a creation with the same `Idempotency-Key`, so that it happens once.",
};

export function errorMeaning(code: ErrorCode): string {
  return MEANING[code];
}

/**
 * The reference's section on error codes, as markdown: a heading per code,
 * which the reference page turns into the anchor each error's `docUrl`
 * points at (`#section/Errors/<code>`).
 */
export function errorsSection(): string {
  const codes = Object.keys(ERROR_STATUS) as ErrorCode[];
  const perCode = codes.map((code) => {
    const meaning = MEANING[code];
    return `## ${code}\n\n**${ERROR_STATUS[code]}**: ${meaning.charAt(0).toUpperCase()}${meaning.slice(1)}. ${REMEDY[code]}`;
  });
  return [
    `# ${ERRORS_SECTION}`,
    "Every error has one shape, `{\"error\": {\"code\", \"message\", \"param\"?, \"requestId\", \"docUrl\"}}`, always as `application/json`: branch on `code`, a stable word; `message` is for people; `docUrl` links this reference's section on the code, below. Each operation lists its statuses and codes. An unknown path is 404 `not_found` whatever the key; a known path with another method is 405 `method_not_allowed` with an `Allow` header. Checks run in this order: path, authentication (401), rate limit (429), scope (403), body and validation (400, 413, 415), then the resource (404, 403, 409).",
    ...perCode,
  ].join("\n\n");
}

/**
 * The edge's own refusals: they can meet any request, this document's
 * included, before a route is known or a key is read (a request line or
 * headers too long or too slow, an HTTP/1.1 request without Host).
 */
export const EDGE_CODES: readonly ErrorCode[] = ["invalid_request", "request_timeout", "uri_too_long", "headers_too_large"];

/**
 * Every error code a route can answer: the gateway's checks follow from the
 * route's fields (api-decisions 1, 2 and 10), the service's own from `errors`.
 */
export function routeErrorCodes(route: RouteDef): ErrorCode[] {
  const codes = new Set<ErrorCode>(EDGE_CODES);
  if (route.auth !== "none") codes.add("unauthorized");
  if (route.auth === "api-key") codes.add("forbidden");
  // Keyless routes are counted per client address instead of per key; admin routes count failed authentications per address.
  codes.add("rate_limited");
  if (route.hasBody) {
    codes.add("invalid_json");
    codes.add("payload_too_large");
    codes.add("unsupported_media_type");
  }
  if (route.path.includes("/:")) codes.add("not_found");
  if (route.idempotent) {
    codes.add("idempotency_request_in_progress");
    codes.add("idempotency_key_reused");
  }
  for (const code of route.errors ?? []) codes.add(code);
  codes.add("internal_error");
  codes.add("service_unavailable");
  return [...codes];
}

/** Codes grouped by their HTTP status, statuses ascending. */
export function byStatus(codes: readonly ErrorCode[]): Array<[number, ErrorCode[]]> {
  const groups = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_STATUS[code];
    groups.set(status, [...(groups.get(status) ?? []), code]);
  }
  return [...groups.entries()].sort(([a], [b]) => a - b);
}
