import { z } from "zod";
import { endpoint, eventDef, noticeDef, type StreamDef, routeEndpoint } from "./contract.js";
import { Caller, Email, Empty, KeyRateLimits, LocalTime, NoBody, Mode, PerMinuteLimit, Scope, Text, Timestamp, Weekday, WorkingHoursEntry, httpRequest } from "./common.js";
import { route, type RouteDef } from "./route.js";

/** A stretch of local time the user likes meetings in, on the listed days (every day when none are listed). */
export const PreferredTime = z
  .strictObject({
    start: LocalTime.meta({ description: "Where the stretch begins, `HH:MM` in the user's zone.", example: "09:00" }),
    end: LocalTime.meta({ description: "Where the stretch ends, `HH:MM` in the user's zone; after `start`.", example: "12:00" }),
    days: z.array(Weekday).max(7).optional().meta({ description: "Weekdays the stretch applies to; every day when absent." }),
  })
  .refine((e) => e.start < e.end, { message: "start must be before end", path: ["end"] });
export type PreferredTime = z.infer<typeof PreferredTime>;

const PREFERENCE_DESCRIPTIONS = {
  preferredTimes: "Local times the user likes meetings in; empty when not stated.",
  avoidDays: "Weekdays the user keeps free of meetings (not all seven).",
  bufferMinutes: "Minutes kept free around the user's busy time: recommended times never break it (a hard rule); null when not stated.",
  maxMeetingsPerDay: "Most meetings the user wants on one day; null when not stated.",
} as const;

const PreferredTimes = z.array(PreferredTime).max(20).meta({ description: PREFERENCE_DESCRIPTIONS.preferredTimes });
const AvoidDays = z.array(Weekday).max(7).meta({ description: PREFERENCE_DESCRIPTIONS.avoidDays });
const BufferMinutes = z.number().int().min(0).max(240).nullable().meta({ description: PREFERENCE_DESCRIPTIONS.bufferMinutes });
const MaxMeetingsPerDay = z.number().int().min(1).max(50).nullable().meta({ description: PREFERENCE_DESCRIPTIONS.maxMeetingsPerDay });

/**
 * What the user states about when to meet (extension of api-decisions 4).
 * AI ranking weighs these above what it learns from the user's history.
 */
export const Preferences = z
  .object({ preferredTimes: PreferredTimes, avoidDays: AvoidDays, bufferMinutes: BufferMinutes, maxMeetingsPerDay: MaxMeetingsPerDay })
  .meta({ description: "When the user likes to meet; `useAI` rankings weigh it above learned habits." });
export type Preferences = z.infer<typeof Preferences>;

export const NO_PREFERENCES: Preferences = { preferredTimes: [], avoidDays: [], bufferMinutes: null, maxMeetingsPerDay: null };

/** PATCH /v1/me: each field given replaces the stored one; the others stay. */
export const PreferencesPatch = z
  .strictObject({
    preferredTimes: PreferredTimes.optional(),
    avoidDays: AvoidDays.optional(),
    bufferMinutes: BufferMinutes.optional(),
    maxMeetingsPerDay: MaxMeetingsPerDay.optional(),
  })
  .meta({ description: "Each field given replaces the stored one; the others stay." });
export type PreferencesPatch = z.infer<typeof PreferencesPatch>;

/** A user as other services see them. */
export const UserProfile = z.object({
  id: z.string().meta({ description: "The user id (`usr_…`).", example: "usr_kY9pF34Qy6nB3Wwd25rq4f5z" }),
  email: z.string().meta({ description: "The account's e-mail address, lower-cased.", example: "ann@example.com" }),
  name: z.string().meta({ description: "The user's name." }),
  timezone: z.string().meta({ description: "IANA time zone name; naive times in requests are read in it.", example: "Europe/Berlin" }),
  workingHours: z.array(WorkingHoursEntry).meta({ description: "When the user works, in their zone; by default Monday to Friday, 09:00–17:00." }),
  preferences: Preferences,
});
export type UserProfile = z.infer<typeof UserProfile>;

// ---- internal endpoints -------------------------------------------------

/** Resolves an API key, by its SHA-256 hash, to the caller it acts for. */
export const accountsAuthenticate = endpoint(
  "accounts.v1.authenticate",
  z.object({ keyHash: z.string().regex(/^[0-9a-f]{64}$/) }),
  z.object({ caller: Caller }),
);

/** Users by id or e-mail (for names, zones and working hours); unknown ones are simply absent. */
export const accountsLookupUsers = endpoint(
  "accounts.v1.users.lookup",
  z.object({ ids: z.array(z.string()).max(1000).optional(), emails: z.array(z.string()).max(1000).optional() }),
  z.object({ users: z.array(UserProfile) }),
);

/** A key as its owner's dashboard lists it: never the key itself or its hash. */
export const OwnApiKey = z.object({
  id: z.string(),
  name: z.string().nullable(),
  mode: Mode,
  scopes: z.array(Scope),
  /** `sk_test_…abcd`: the prefix and the last four characters. */
  preview: z.string(),
  createdAt: Timestamp,
  revokedAt: Timestamp.nullable(),
});
export type OwnApiKey = z.infer<typeof OwnApiKey>;

/** Every key of one user, newest first. */
export const accountsListKeys = endpoint("accounts.v1.keys.list", z.object({ userId: z.string() }), z.object({ keys: z.array(OwnApiKey) }));

/** Revokes a key of this user (404 for anyone else's) and tells every gateway replica at once. */
export const accountsRevokeOwnKey = endpoint("accounts.v1.keys.revoke-own", z.object({ userId: z.string(), keyId: z.string() }), z.object({ id: z.string(), revoked: z.literal(true) }));

// ---- events and notices -------------------------------------------------

export const ACCOUNTS_STREAM: StreamDef = { name: "ACCOUNTS", subjectPrefix: "accounts.v1.events" };

const UserEventPayload = z.object({
  eventId: z.string(),
  userId: z.string(),
  email: z.string(),
  name: z.string(),
  timezone: z.string(),
  /** Absent from events published before preferences existed. */
  preferences: Preferences.optional(),
  occurredAt: Timestamp,
});
export const userCreated = eventDef(ACCOUNTS_STREAM, "user.created", UserEventPayload);
export const userUpdated = eventDef(ACCOUNTS_STREAM, "user.updated", UserEventPayload);

/** Tells every gateway replica to forget a cached key at once. */
export const keyRevoked = noticeDef("accounts.v1.notice.key-revoked", z.object({ apiKeyId: z.string(), keyHash: z.string() }));
/** Tells every gateway replica to read a key's settings (its limits) again at once. */
export const keyChanged = noticeDef("accounts.v1.notice.key-changed", z.object({ apiKeyId: z.string(), keyHash: z.string() }));
/**
 * Tells every gateway replica to forget the cached callers of a user whose
 * account changed in what a caller carries (the time zone, working hours;
 * from invites: a calendar connected or removed), before the change is
 * answered: a naive time is then read in the new zone everywhere.
 */
export const callerChanged = noticeDef("accounts.v1.notice.caller-changed", z.object({ userId: z.string() }));

// ---- public routes ------------------------------------------------------

const TimeZoneName = Text.min(1).max(64).meta({ description: "An IANA time zone name (`Europe/Berlin`, or `UTC`); fixed offsets are refused.", example: "Europe/Berlin" });

export const MeUpdateBody = z.strictObject({
  name: Text.trim().min(1).max(200).optional().meta({ description: "The user's name, 1–200 characters after trimming." }),
  timezone: TimeZoneName.optional().meta({ description: "The user's IANA time zone (`Europe/Berlin`, or `UTC`); it applies to every request sent after the answer." }),
  workingHours: z.array(WorkingHoursEntry).max(50).optional().meta({ description: "Replaces the working hours: `{day, start, end}` windows; several a day when they do not overlap." }),
  preferences: PreferencesPatch.optional(),
});

export const accountsGetMe = routeEndpoint(
  "accounts.v1.http.me.get",
  httpRequest({ params: Empty, query: Empty, body: NoBody }),
  { 200: UserProfile },
);
export const accountsUpdateMe = routeEndpoint(
  "accounts.v1.http.me.update",
  httpRequest({ params: Empty, query: Empty, body: MeUpdateBody }),
  { 200: UserProfile },
);

// ---- admin routes (the dashboard's job, api-decisions part 3) -------------

export const AdminCreateUserBody = z.strictObject({
  email: Email.meta({ description: "The user's e-mail address; one already used is 409 `user_exists`." }),
  name: Text.trim().min(1).max(200).meta({ description: "The user's name, 1–200 characters after trimming." }),
  timezone: TimeZoneName.optional().meta({ description: "The user's IANA time zone; `UTC` when absent.", default: "UTC" }),
});
export const AdminCreateKeyBody = z.strictObject({
  mode: Mode.meta({ description: "`test` or `live`: which data the key sees and changes." }),
  scopes: z.array(Scope).min(1).max(20).optional().meta({ description: "What the key may do; every scope when absent." }),
  name: Text.trim().min(1).max(200).optional().meta({ description: "A label for the key, 1–200 characters after trimming." }),
});

/** Omitted: unchanged; null: back to the deployment's default. */
export const AdminUpdateKeyBody = z.strictObject({
  rateLimits: z
    .strictObject({
      standardPerMinute: PerMinuteLimit.nullable().optional().meta({ description: "Requests a minute on every operation but recommended times; null: back to the deployment's default; omitted: unchanged." }),
      aiPerMinute: PerMinuteLimit.nullable().optional().meta({ description: "Requests a minute on `POST /v1/availability/recommended`; null: back to the deployment's default; omitted: unchanged." }),
    })
    .meta({ description: "The key's own limits, applied at once by every gateway." }),
});

// ---- what the admin routes answer ----------------------------------------

/** A user as the admin API shows it (api-decisions part 3). */
export const AdminUser = z.object({
  id: z.string().meta({ description: "The user id (`usr_…`).", example: "usr_kY9pF34Qy6nB3Wwd25rq4f5z" }),
  email: z.string().meta({ description: "The user's e-mail address, lower-cased.", example: "ann@example.com" }),
  name: z.string().meta({ description: "The user's name." }),
  timezone: z.string().meta({ description: "The user's IANA time zone.", example: "Europe/Berlin" }),
  createdAt: Timestamp.meta({ description: "When the user was created." }),
});

export const AdminUserList = z.object({ data: z.array(AdminUser).meta({ description: "The users with the e-mail: none or one." }) });

/** A new API key: `key` is shown here and never again. */
export const ApiKeyCreated = z.object({
  id: z.string().meta({ description: "The key id (`key_…`).", example: "key_y7AjzQHb6BAEcn6zJ4A3DdvH" }),
  key: z.string().meta({ description: "The API key, `sk_test_…` or `sk_live_…`; shown only in this answer." }),
  mode: Mode,
  scopes: z.array(Scope).meta({ description: "What the key may do." }),
  name: z.string().nullable().meta({ description: "The key's label; null when none was given." }),
  createdAt: Timestamp.meta({ description: "When the key was created." }),
});

export const ApiKeyRevoked = z.object({
  id: z.string().meta({ description: "The key id (`key_…`).", example: "key_y7AjzQHb6BAEcn6zJ4A3DdvH" }),
  revoked: z.literal(true).meta({ description: "Always true: the key is refused from now on." }),
});

/** A key as the admin API shows it after creation: never the key itself. */
export const ApiKey = z.object({
  id: z.string().meta({ description: "The key id (`key_…`).", example: "key_y7AjzQHb6BAEcn6zJ4A3DdvH" }),
  mode: Mode,
  scopes: z.array(Scope).meta({ description: "What the key may do." }),
  name: z.string().nullable().meta({ description: "The key's label; null when none was given." }),
  rateLimits: KeyRateLimits.meta({ description: "The key's own limits; null ones are the deployment's defaults." }),
  createdAt: Timestamp.meta({ description: "When the key was created." }),
  revokedAt: Timestamp.nullable().meta({ description: "When the key was revoked; null while it is in use." }),
});

export const accountsAdminCreateUser = routeEndpoint(
  "accounts.v1.http.admin.users.create",
  httpRequest({ params: Empty, query: Empty, body: AdminCreateUserBody }),
  { 201: AdminUser },
);
export const accountsAdminFindUsers = routeEndpoint(
  "accounts.v1.http.admin.users.find",
  httpRequest({ params: Empty, query: z.strictObject({ email: Text.min(1).max(254).meta({ description: "E-mail address, compared case-insensitively.", example: "ann@example.com" }) }), body: NoBody }),
  { 200: AdminUserList },
);
export const accountsAdminCreateKey = routeEndpoint(
  "accounts.v1.http.admin.keys.create",
  httpRequest({ params: z.strictObject({ id: Text.meta({ description: "The user id (`usr_…`).", example: "usr_kY9pF34Qy6nB3Wwd25rq4f5z" }) }), query: Empty, body: AdminCreateKeyBody }),
  { 201: ApiKeyCreated },
);
export const accountsAdminRevokeKey = routeEndpoint(
  "accounts.v1.http.admin.keys.revoke",
  httpRequest({ params: z.strictObject({ id: Text.meta({ description: "The key id (`key_…`).", example: "key_y7AjzQHb6BAEcn6zJ4A3DdvH" }) }), query: Empty, body: NoBody }),
  { 200: ApiKeyRevoked },
);

export const accountsAdminUpdateKey = routeEndpoint(
  "accounts.v1.http.admin.keys.update",
  httpRequest({ params: z.strictObject({ id: Text.meta({ description: "The key id (`key_…`).", example: "key_y7AjzQHb6BAEcn6zJ4A3DdvH" }) }), query: Empty, body: AdminUpdateKeyBody }),
  { 200: ApiKey },
);

export const accountsRoutes: RouteDef[] = [
  route({ method: "GET", path: "/v1/me", endpoint: accountsGetMe, operationId: "accountsMeGet", auth: "api-key", scope: "account:read", bucket: "standard", hasBody: false, summary: "The authenticated user's account", responses: { 200: "The account" } }),
  route({ method: "PATCH", path: "/v1/me", endpoint: accountsUpdateMe, operationId: "accountsMeUpdate", auth: "api-key", scope: "account:write", bucket: "standard", hasBody: true, summary: "Update name, time zone, working hours or scheduling preferences", responses: { 200: "The whole account after the change" } }),
  route({ method: "POST", path: "/admin/v1/users", endpoint: accountsAdminCreateUser, operationId: "accountsAdminUsersCreate", auth: "admin", hasBody: true, summary: "Create a user", responses: { 201: "The new user" }, errors: ["user_exists"] }),
  route({ method: "GET", path: "/admin/v1/users", endpoint: accountsAdminFindUsers, operationId: "accountsAdminUsersFind", auth: "admin", hasBody: false, summary: "Find users by e-mail", responses: { 200: "The users with this e-mail (none or one)" } }),
  route({ method: "POST", path: "/admin/v1/users/:id/api-keys", endpoint: accountsAdminCreateKey, operationId: "accountsAdminKeysCreate", auth: "admin", hasBody: true, summary: "Create an API key; the key is shown only here", responses: { 201: "The new key; `key` is shown only in this answer" } }),
  route({ method: "PATCH", path: "/admin/v1/api-keys/:id", endpoint: accountsAdminUpdateKey, operationId: "accountsAdminKeysUpdate", auth: "admin", hasBody: true, summary: "Set an API key's own rate limits", responses: { 200: "The key after the change" } }),
  route({ method: "DELETE", path: "/admin/v1/api-keys/:id", endpoint: accountsAdminRevokeKey, operationId: "accountsAdminKeysRevoke", auth: "admin", hasBody: false, summary: "Revoke an API key", responses: { 200: "The key is revoked (again, when it already was)" } }),
];
