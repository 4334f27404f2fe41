import { z } from "zod";

export const MODES = ["test", "live"] as const;
export const Mode = z.enum(MODES).meta({ description: "`test` or `live`: a test key sees and changes only test data, a live key only live data." });
export type Mode = z.infer<typeof Mode>;

export const SCOPES = [
  "meetings:read",
  "meetings:write",
  "availability:read",
  "contacts:read",
  "contacts:write",
  "account:read",
  "account:write",
  "events:read",
  "webhooks:read",
  "webhooks:write",
] as const;
export const Scope = z.enum(SCOPES).meta({ description: "What a key may do; an operation names the scope it needs." });
export type Scope = z.infer<typeof Scope>;

/** Who is calling: resolved by the gateway from the API key, carried in a bus header. */
/** Most requests a minute one key may be granted in a bucket. */
export const MAX_PER_MINUTE_LIMIT = 1_000_000;
export const PerMinuteLimit = z.number().int().min(1).max(MAX_PER_MINUTE_LIMIT);

/** A key's own requests-a-minute limits; null: the deployment's default for that bucket. */
export const KeyRateLimits = z.object({
  standardPerMinute: PerMinuteLimit.nullable().meta({ description: "The key's own limit a minute on every operation but recommended times; null: the deployment's default." }),
  aiPerMinute: PerMinuteLimit.nullable().meta({ description: "The key's own limit a minute on `POST /v1/availability/recommended`; null: the deployment's default." }),
});
export type KeyRateLimits = z.infer<typeof KeyRateLimits>;

export const WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"] as const;
export const Weekday = z.enum(WEEKDAYS).meta({ description: "A weekday, `monday` … `sunday`." });
export type Weekday = z.infer<typeof Weekday>;

/** Local time of day, 00:00–23:59; "24:00" and other roll-overs are refused. */
export const LocalTime = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, "must be a time HH:MM between 00:00 and 23:59").meta({ description: "Local time of day, `HH:MM` from 00:00 to 23:59.", example: "09:00" });

export const WorkingHoursEntry = z
  .strictObject({
    day: Weekday.meta({ description: "The weekday of the window." }),
    start: LocalTime.meta({ description: "When the window opens, `HH:MM` in the user's zone.", example: "09:00" }),
    end: LocalTime.meta({ description: "When the window closes, `HH:MM` in the user's zone; after `start`.", example: "17:00" }),
  })
  .refine((e) => e.start < e.end, { message: "start must be before end", path: ["end"] });
export type WorkingHoursEntry = z.infer<typeof WorkingHoursEntry>;

export const Caller = z.object({
  userId: z.string(),
  email: z.string(),
  timezone: z.string(),
  mode: Mode,
  scopes: z.array(Scope),
  apiKeyId: z.string(),
  /** Absent: the deployment's defaults. */
  rateLimits: KeyRateLimits.optional(),
  /** The user's working hours in `timezone`, so that a day view needs no question to accounts; absent: ask accounts. */
  workingHours: z.array(WorkingHoursEntry).optional(),
  /**
   * Whether the user has a calendar connection whose busy time counts (invites'
   * answer, for the caller's mode), so that a day view of their own day need not
   * ask invites when not; absent: unknown, ask.
   */
  calendarConnected: z.boolean().optional(),
});
export type Caller = z.infer<typeof Caller>;

/** The one spelling of an instant (Timestamp): UTC, whole seconds, a fraction of a second dropped, never rounded up. */
export function formatTimestamp(at: Date | number): string {
  return `${new Date(at).toISOString().slice(0, 19)}Z`;
}

/** Second-precision UTC timestamp as every response spells it. */
export const Timestamp = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/).meta({ description: "UTC, second precision: `YYYY-MM-DDTHH:mm:ssZ`.", example: "2026-05-04T09:30:00Z" });

// ---- what a client may send ------------------------------------------------------

/**
 * Whether Postgres can hold the string as text or jsonb: it refuses NUL, and
 * an unpaired surrogate has no UTF-8 form.
 */
export function isStorableText(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0) return false;
    if (c >= 0xdc00 && c <= 0xdfff) return false;
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return false;
      i++;
    }
  }
  return true;
}

/**
 * Every string a client sends (body fields, query and path parameters) is a
 * Text: one a service can store or look up, so a character storage refuses
 * is a 400 naming the field, never a 500 from the database.
 */
export const Text = z.string().refine(isStorableText, "must not contain NUL characters or unpaired surrogates");

/**
 * The calendar dates a client may name, in any field and any form: years
 * 1970 to 9998. Every zone's clock is known over them (the tz database's
 * rules hold one offset change a day at most from the 1970s on), and what a
 * request looks at past a date (the next day, a 31-day horizon, a meeting's
 * end, an offset of up to 18 hours) stays within four-digit years.
 */
export const FIRST_SUPPORTED_DATE = "1970-01-01";
export const LAST_SUPPORTED_DATE = "9998-12-31";
export const DATE_RANGE_MESSAGE = `must be a date from ${FIRST_SUPPORTED_DATE} to ${LAST_SUPPORTED_DATE}`;

/** Whether a date or datetime, written from its four-digit year on (as ISO 8601 writes it), is a supported date; any other text is for its field's own format check. */
export function isSupportedDate(text: string): boolean {
  const year = /^(\d{4})-/.exec(text)?.[1];
  return year === undefined || (year >= FIRST_SUPPORTED_DATE.slice(0, 4) && year <= LAST_SUPPORTED_DATE.slice(0, 4));
}

/** A Text that, when it is an ISO date or datetime, names a supported date. */
export const DateText = Text.refine(isSupportedDate, DATE_RANGE_MESSAGE);

/** Whether a Timestamp names an instant that exists: no day 30 of February, no hour 24, nothing rolled over. */
function isRealInstant(timestamp: string): boolean {
  const ms = Date.parse(timestamp);
  return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 19) === timestamp.slice(0, 19);
}

/** A second-precision UTC timestamp a client sends: a real instant on a supported date. */
export const TimestampInput = Timestamp.refine(isRealInstant, "must be a real UTC time such as 2026-05-04T09:30:00Z").refine(isSupportedDate, DATE_RANGE_MESSAGE);

/** Lower-cased e-mail address; the normal form stored everywhere. */
export const Email = Text.trim()
  .max(254)
  .pipe(z.email({ message: "must be a valid e-mail address" }))
  .transform((e) => e.toLowerCase())
  .meta({ format: "email", description: "An e-mail address, at most 254 characters; stored lower-cased.", example: "ann@example.com" });

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
 * record, a test) gets it from JSON.stringify or toJSON(). `T` is what the
 * text holds, as the route's declared reply says: the service building the
 * text vouches for it.
 */
export class JsonText<T = unknown> {
  constructor(readonly encoded: string | Uint8Array) {}

  toJSON(): T {
    return JSON.parse(typeof this.encoded === "string" ? this.encoded : utf8.decode(this.encoded)) as T;
  }
}

/**
 * Reply of every public HTTP route as the wire checks it: what the gateway
 * writes back. The body is any JSON value, or a JsonText; what each route
 * may answer is its endpoint's `replies` (RouteEndpoint), checked when the
 * handler is compiled.
 */
export const HttpReply = z.object({
  /** A success, or a redirection (a route declaring REDIRECT). */
  status: z.number().int().min(200).max(399),
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
