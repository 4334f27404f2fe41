/**
 * Every error code of the public API with its HTTP status. Services reply
 * with these over the bus and the gateway maps them without guessing.
 */
export const ERROR_STATUS = {
  invalid_json: 400,
  invalid_request: 400,
  meeting_ended: 400,
  meeting_cancelled: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  contact_exists: 409,
  user_exists: 409,
  request_timeout: 408,
  idempotency_request_in_progress: 409,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  rate_limited: 429,
  headers_too_large: 431,
  internal_error: 500,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_STATUS, code);
}

/** Where the gateway serves the HTML reference page. */
export const REFERENCE_PAGE_PATH = "/docs";

/** The reference page's section on error codes: a heading of its own per code (the page's anchors are `section/<heading>/<subheading>`). */
export const ERRORS_SECTION = "Errors";

/** The anchor of the reference page's section on `code`. */
export function errorSectionAnchor(code: ErrorCode): string {
  return `section/${ERRORS_SECTION}/${code}`;
}

/**
 * The `docUrl` of an error: the reference page's section on its code. Under
 * the deployment's public base URL when the gateway knows it; otherwise a
 * reference relative to the API's own address, which a client resolves
 * against the URL it called.
 */
export function errorDocUrl(code: ErrorCode, publicBaseUrl?: string): string {
  return `${publicBaseUrl ?? ""}${REFERENCE_PAGE_PATH}#${errorSectionAnchor(code)}`;
}
