import type { Endpoint } from "./contract.js";
import type { Scope } from "./common.js";

/** Which per-key rate-limit bucket a route counts against (api-decisions part 9). */
export type RateBucket = "standard" | "ai";

/**
 * One public HTTP route: the gateway authenticates, checks `scope`, counts the
 * request in `bucket`, and forwards `{params, query, body}` to `endpoint`,
 * whose reply is an HttpReply. Admin routes use the admin token instead.
 */
export interface RouteDef {
  readonly method: "GET" | "POST" | "PATCH" | "DELETE";
  /** Express-style path, e.g. `/v1/contacts/:id`. */
  readonly path: string;
  readonly endpoint: Endpoint;
  readonly auth: "api-key" | "admin";
  readonly scope?: Scope;
  readonly bucket?: RateBucket;
  /** Whether the route takes a JSON body (POST/PATCH). */
  readonly hasBody: boolean;
  /** Whether `Idempotency-Key` applies (every public POST). */
  readonly idempotent?: boolean;
  readonly summary: string;
}
