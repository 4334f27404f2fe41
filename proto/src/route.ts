import type { ReplyStatus, RouteEndpoint } from "./contract.js";
import type { Scope } from "./common.js";
import type { ErrorCode } from "./errors.js";

/** Which per-key rate-limit bucket a route counts against (api-decisions part 9). */
export type RateBucket = "standard" | "ai";

/**
 * A route on its way out (docs/versioning.md): every answer says so, with
 * RFC 9745's Deprecation, RFC 8594's Sunset and a Link to the migration guide.
 */
export interface RouteDeprecation {
  /** The day it was deprecated, `YYYY-MM-DD` (UTC). */
  readonly since: string;
  /** The day after which it may stop answering, `YYYY-MM-DD` (UTC): at least 12 months after `since`. */
  readonly sunset: string;
  /** The migration guide. */
  readonly link: string;
}

/**
 * One public HTTP route: the gateway authenticates, checks `scope`, counts the
 * request in `bucket`, and forwards `{params, query, body}` to `endpoint`,
 * which declares the success answers (status and body) its handler may give.
 * Admin routes use the admin token instead. Declared with route(), which
 * checks `responses` against the endpoint's answers.
 */
export interface RouteDef<E extends RouteEndpoint = RouteEndpoint> {
  readonly method: "GET" | "POST" | "PATCH" | "DELETE";
  /** Express-style path, e.g. `/v1/contacts/:id`. */
  readonly path: string;
  readonly endpoint: E;
  /** The operation's name in the OpenAPI document and the typed client (`meetingsList`). */
  readonly operationId: string;
  /**
   * `none` is for the routes a provider calls, or has a browser call: the
   * redirect after consent (OAuth callback) and push notifications. They
   * carry no key, and the service checks what they carry.
   */
  readonly auth: "api-key" | "admin" | "none";
  readonly scope?: Scope;
  readonly bucket?: RateBucket;
  /** Whether the route takes a JSON body (POST/PATCH). */
  readonly hasBody: boolean;
  /** Whether `Idempotency-Key` applies (every public POST). */
  readonly idempotent?: boolean;
  readonly summary: string;
  /** What each success answer of the endpoint means, for the document: one line per declared status. */
  readonly responses: { readonly [S in ReplyStatus<E["replies"]>]: string };
  /**
   * Error codes of the service's own checks. The gateway's codes (auth, scope,
   * rate limit, bodies, validation, unavailability) and `not_found` for a route
   * with path parameters follow from the other fields and are not listed.
   */
  readonly errors?: readonly ErrorCode[];
  /** Set once the route is deprecated; the OpenAPI document marks it too. */
  readonly deprecation?: RouteDeprecation;
}

/** A route whose `responses` describe exactly the statuses its endpoint declares. */
export function route<E extends RouteEndpoint>(def: RouteDef<E>): RouteDef {
  return def;
}
