import { z } from "zod";

export const MODES = ["test", "live"] as const;
export const Mode = z.enum(MODES);
export type Mode = z.infer<typeof Mode>;

export const SCOPES = [
  "meetings:read",
  "meetings:write",
  "availability:read",
  "contacts:read",
  "contacts:write",
  "account:read",
  "account:write",
] as const;
export const Scope = z.enum(SCOPES);
export type Scope = z.infer<typeof Scope>;

/** Who is calling: resolved by the gateway from the API key, carried in a bus header. */
/** Most requests a minute one key may be granted in a bucket. */
export const MAX_PER_MINUTE_LIMIT = 1_000_000;
export const PerMinuteLimit = z.number().int().min(1).max(MAX_PER_MINUTE_LIMIT);

/** A key's own requests-a-minute limits; null: the deployment's default for that bucket. */
export const KeyRateLimits = z.object({
  standardPerMinute: PerMinuteLimit.nullable(),
  aiPerMinute: PerMinuteLimit.nullable(),
});
export type KeyRateLimits = z.infer<typeof KeyRateLimits>;

export const Caller = z.object({
  userId: z.string(),
  email: z.string(),
  timezone: z.string(),
  mode: Mode,
  scopes: z.array(Scope),
  apiKeyId: z.string(),
  /** Absent: the deployment's defaults. */
  rateLimits: KeyRateLimits.optional(),
});
export type Caller = z.infer<typeof Caller>;

/** Second-precision UTC timestamp as every response spells it. */
export const Timestamp = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);

/** Lower-cased e-mail address; the normal form stored everywhere. */
export const Email = z
  .string()
  .trim()
  .max(254)
  .pipe(z.email({ message: "must be a valid e-mail address" }))
  .transform((e) => e.toLowerCase())
  .meta({ format: "email" });

/** Request payload shape of every public HTTP route forwarded by the gateway. */
export function httpRequest<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType>(shape: {
  params: P;
  query: Q;
  body: B;
}) {
  return z.object(shape);
}

const utf8 = new TextDecoder();

/**
 * A reply body already encoded as JSON: its text, or that text's UTF-8 bytes.
 * A service that builds an answer as JSON text in one piece returns it so, and
 * the gateway writes it to the client as it is, with no parse and no second
 * encoding on the way. Whatever needs the value itself (an idempotency
 * record, a test) gets it from JSON.stringify or toJSON().
 */
export class JsonText {
  constructor(readonly encoded: string | Uint8Array) {}

  toJSON(): unknown {
    return JSON.parse(typeof this.encoded === "string" ? this.encoded : utf8.decode(this.encoded));
  }
}

/** Reply of every public HTTP route: what the gateway writes back. The body is any JSON value, or a JsonText. */
export const HttpReply = z.object({
  status: z.number().int().min(200).max(299),
  body: z.unknown().optional(),
  headers: z.record(z.string(), z.string()).optional(),
});
export type HttpReply = z.infer<typeof HttpReply>;

/**
 * The body of a route that takes none. Optional, because the JSON round trip on
 * the bus drops a key whose value is undefined.
 */
export const NoBody = z.undefined().optional();

/** An empty query or params object; unknown keys are refused. */
export const Empty = z.strictObject({});
