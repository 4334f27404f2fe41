import { z } from "zod";

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

const ERROR_CODES = Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]];

/** The one error envelope of the API (api-decisions part 1), as the gateway writes it. */
export const ErrorBody = z.strictObject({
  error: z
    .strictObject({
      code: z.enum(ERROR_CODES).meta({ description: "What went wrong, a stable code a client can branch on." }),
      message: z.string().meta({ description: "What went wrong, for people; never internals." }),
      /** The field a validation failure is about (`participants[2]`); only on validation errors. */
      param: z.string().optional().meta({ description: "The field or parameter a validation failure is about; only on validation errors.", example: "participants[2]" }),
      /** Equal to the response's X-Request-Id header. */
      requestId: z.string().meta({ description: "The response's `X-Request-Id`.", example: "req_8ZtV2pQ5xN1mK7wR4cL9bY3e" }),
      /** The reference's section on this code: absolute under the deployment's public base URL, else relative to the API's address. */
      docUrl: z.string().meta({
        description:
          "Where the reference documents this code: its section of the reference page, under the deployment's public base URL when one is configured (`PUBLIC_BASE_URL`), otherwise relative to the API's address (resolve it against the URL you called).",
        format: "uri-reference",
        example: "https://api.example.com/docs#section/Errors/invalid_request",
      }),
    })
    .meta({ description: "The error." }),
});
export type ErrorBody = z.infer<typeof ErrorBody>;
