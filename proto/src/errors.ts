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
