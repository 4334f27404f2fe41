import { z } from "zod";
import { endpoint, eventDef, REDIRECT, type StreamDef, routeEndpoint } from "./contract.js";
import { Email, Empty, Mode, NoBody, Text, Timestamp, TimestampInput, httpRequest } from "./common.js";
import { AttendeeResponse, BusyInterval, MAX_BUSY_USERS, MeetingIdParams } from "./meetings.js";
import { route, type RouteDef } from "./route.js";

// ---- invite deliveries ---------------------------------------------------------

export const INVITE_STATES = ["pending", "sent", "simulated", "failed"] as const;
export const InviteState = z.enum(INVITE_STATES);
export type InviteState = z.infer<typeof InviteState>;

export const INVITE_CHANNELS = ["google", "microsoft", "caldav", "email"] as const;
export const InviteChannel = z.enum(INVITE_CHANNELS);
export type InviteChannel = z.infer<typeof InviteChannel>;

/** What a participant is told, as the iCalendar METHOD names it. */
export const INVITE_KINDS = ["request", "cancel"] as const;
export const InviteKind = z.enum(INVITE_KINDS);
export type InviteKind = z.infer<typeof InviteKind>;

/** The newest delivery to one participant of a meeting. */
export const MeetingInvite = z.object({
  meetingId: z.string().meta({ description: "The meeting invited to (`mtg_…`).", example: "mtg_4kQ9sVnB2xR7tLmP0aZcY8dE" }),
  email: z.string().meta({ description: "The participant's address." }),
  kind: InviteKind.meta({ description: "`request`: an invitation or an update; `cancel`: the meeting was cancelled or the participant removed." }),
  sequence: z.number().int().positive().meta({ description: "The meeting's change number this delivery reports (iCalendar SEQUENCE)." }),
  state: InviteState.meta({ description: "`pending`: not delivered yet (possibly retrying); `sent`: handed to the provider; `simulated`: test mode, recorded and never sent; `failed`: given up after the last try." }),
  channel: InviteChannel.meta({ description: "`google`: through the organizer's connected Google Calendar; `microsoft`: through the organizer's Microsoft 365 / Outlook.com calendar (Microsoft Graph), which sends it; `caldav`: through the organizer's CalDAV calendar, whose server sends it; `email`: an iCalendar e-mail." }),
  attempts: z.number().int().min(0).meta({ description: "How many times delivery was tried so far." }),
  lastError: z.string().nullable().meta({ description: "Why the last attempt failed; null when none did." }),
  updatedAt: Timestamp.meta({ description: "When the delivery last changed state." }),
  response: AttendeeResponse.nullable().describe("The participant's answer, as `attendees` of the meeting has it; null for a participant since removed."),
  respondedAt: Timestamp.nullable().describe("When the participant answered; null while they have not, or when removed."),
});
export type MeetingInvite = z.infer<typeof MeetingInvite>;

export const MeetingInviteList = z.object({ data: z.array(MeetingInvite).meta({ description: "The newest delivery to each participant, removed ones included, by e-mail; empty when no invite was sent." }) });

// ---- events ------------------------------------------------------------------

export const INVITES_STREAM: StreamDef = { name: "INVITES", subjectPrefix: "invites.v1.events" };

/**
 * A delivery settled: handed to the provider (`invite.sent`; in test mode
 * recorded as `simulated`, never sent), or given up after the last try
 * (`invite.failed`). Written in the transaction that settles it, so each
 * settlement is published once. `invite` is the delivery without the
 * participant's answer, which meetings owns.
 */
const InviteEventPayload = z.object({
  eventId: z.string().describe("Unique per settlement: the delivery's key and outcome."),
  meetingId: z.string(),
  mode: Mode,
  organizer: z.object({ userId: z.string(), email: z.string() }),
  invite: MeetingInvite.omit({ response: true, respondedAt: true }),
  occurredAt: Timestamp,
});

export const inviteSent = eventDef(INVITES_STREAM, "invite.sent", InviteEventPayload);
export const inviteFailed = eventDef(INVITES_STREAM, "invite.failed", InviteEventPayload);

/** Every event the invites service writes to its stream. */
export const inviteEvents = [inviteSent, inviteFailed] as const;

export const invitesList = routeEndpoint("invites.v1.http.list", httpRequest({ params: MeetingIdParams, query: Empty, body: NoBody }), { 200: MeetingInviteList });

// ---- calendar connections ------------------------------------------------------

export const CALENDAR_PROVIDERS = ["google", "microsoft", "caldav"] as const;
export const CalendarProvider = z.enum(CALENDAR_PROVIDERS).meta({ description: "The calendar provider: `google` (Google Calendar), `microsoft` (Microsoft 365 or Outlook.com, through Microsoft Graph) or `caldav` (any CalDAV server: iCloud, Fastmail, Nextcloud…)." });
export type CalendarProvider = z.infer<typeof CalendarProvider>;

export const CONNECTION_STATUSES = ["active", "broken"] as const;
export const ConnectionStatus = z.enum(CONNECTION_STATUSES);
export type ConnectionStatus = z.infer<typeof ConnectionStatus>;

export const CalendarConnection = z.object({
  id: z.string().meta({ description: "The connection id (`cal_…`).", example: "cal_7hQ2xN9sVbL4tRmP1aZcY8dK" }),
  provider: CalendarProvider,
  accountEmail: z.string().nullable().meta({ description: "The provider account's address, when the provider told it." }),
  status: ConnectionStatus.meta({ description: "`active`: in use; `broken`: the grant was revoked or expired; invites go by e-mail until the user connects again." }),
  createdAt: Timestamp.meta({ description: "When the connection was made." }),
  serverUrl: z.string().nullable().describe("The CalDAV server's address; null for other providers."),
  default: z.boolean().describe("Whether invites go through this connection (`PATCH … {default: true}`); with no default, through Google when connected, else Microsoft when connected, else by e-mail."),
  busyCalendars: z.array(z.string()).nullable().describe("The ids of the calendars whose events count as busy time; null: the provider's default (every calendar for CalDAV, the primary one for Google and Microsoft)."),
});
export type CalendarConnection = z.infer<typeof CalendarConnection>;

export const CalendarConnectionList = z.object({ data: z.array(CalendarConnection).meta({ description: "Every connection of the user, newest first." }) });

export const ConnectStarted = z.object({
  authorizationUrl: z.string().meta({ description: "Send the user's browser here to grant access; the provider then redirects to the callback." }),
  expiresAt: Timestamp.meta({ description: "The consent must be completed before this time." }),
});

export const OAuthCallbackQuery = z.strictObject({
  state: Text.min(1).max(200).meta({ description: "The value the consent URL carried; binds the answer to the user who started it." }),
  code: Text.min(1).max(2_000).optional().meta({ description: "The authorization code Google grants on consent; missing when the user refused." }),
  error: Text.max(200).optional().meta({ description: "Set by Google when the user refused (e.g. `access_denied`)." }),
  scope: Text.max(2_000).optional().meta({ description: "Set by Google: the scopes granted; not used." }),
  authuser: Text.max(20).optional().meta({ description: "Set by Google; not used." }),
  prompt: Text.max(50).optional().meta({ description: "Set by Google; not used." }),
  hd: Text.max(253).optional().meta({ description: "Set by Google: the Workspace domain of the account; not used." }),
  iss: Text.max(200).optional().meta({ description: "Set by Google: the issuer; not used." }),
});

/** What Microsoft's identity platform puts on the redirect after consent (OAuth 2.0 authorization code flow). */
export const MicrosoftCallbackQuery = z.strictObject({
  state: Text.min(1).max(200).meta({ description: "The value the consent URL carried; binds the answer to the user who started it." }),
  code: Text.min(1).max(4_000).optional().meta({ description: "The authorization code Microsoft grants on consent; missing when the user refused." }),
  error: Text.max(200).optional().meta({ description: "Set by Microsoft when the user refused or consent failed (e.g. `access_denied`, `consent_required`)." }),
  error_description: Text.max(2_000).optional().meta({ description: "Set by Microsoft with `error`; not used." }),
  error_uri: Text.max(2_000).optional().meta({ description: "Set by Microsoft with `error`; not used." }),
  session_state: Text.max(200).optional().meta({ description: "Set by Microsoft: the sign-in session; not used." }),
});

/** A CalDAV account; the password is an app password, checked with the server before it is kept (sealed). */
export const CalDavConnectBody = z.strictObject({
  serverUrl: Text.max(2_000)
    .regex(/^https?:\/\/[^\s]+$/, "must be an http:// or https:// URL")
    .describe("The CalDAV server's address, e.g. `https://caldav.fastmail.com/` or `https://cloud.example.com/remote.php/dav/`.")
    .meta({ example: "https://caldav.fastmail.com/" }),
  username: Text.min(1).max(320).describe("The account's user name, usually its e-mail address."),
  password: Text.min(1).max(1_024).describe("An app password for the account; stored encrypted, never shown again."),
});

export const ProviderCalendar = z.object({
  id: z.string().describe("The calendar's id at the provider (for CalDAV its URL; for Google and Microsoft the main calendar is `primary`); what `busyCalendars` lists."),
  name: z.string().describe("The calendar's name as the provider shows it."),
  busy: z.boolean().describe("Whether its events count as busy time."),
});
export const ProviderCalendarList = z.object({ data: z.array(ProviderCalendar).describe("Every calendar of the connection that holds events.") });

export const ConnectionUpdateBody = z.strictObject({
  busyCalendars: z.array(Text.min(1).max(2_000)).max(100).nullable().optional().describe("The ids of the calendars whose events count as busy time (from `GET …/calendars`); null returns to the provider's default."),
  default: z.literal(true).optional().describe("`true` makes this the connection invites go through (the user's other connections stop being the default)."),
});

const ConnectionIdParams = z.strictObject({ id: Text.meta({ description: "The connection id (`cal_…`).", example: "cal_7hQ2xN9sVbL4tRmP1aZcY8dK" }) });
const UserIdParams = z.strictObject({ id: Text.meta({ description: "The user id (`usr_…`).", example: "usr_kY9pF34Qy6nB3Wwd25rq4f5z" }) });

/** Tokens an operator attaches for tests and demos, as the provider's token endpoint would have answered. */
export const AdminAttachConnectionBody = z.strictObject({
  provider: CalendarProvider.extract(["google", "microsoft"]).describe("The OAuth provider whose tokens these are: `google` or `microsoft`."),
  accountEmail: Email.optional().meta({ description: "The provider account's address, when known." }),
  accessToken: Text.min(1).max(4_096).meta({ description: "The OAuth access token, as the provider's token endpoint answered it; stored encrypted." }),
  refreshToken: Text.min(1).max(4_096).meta({ description: "The OAuth refresh token, used once the access token has expired; stored encrypted." }),
  /** When the access token expires; past it the refresh token is used. */
  expiresAt: TimestampInput.optional().meta({ description: "When the access token expires; past it the refresh token is used." }),
});

export const connectionsStartGoogle = routeEndpoint("invites.v1.http.connections.google.start", httpRequest({ params: Empty, query: Empty, body: NoBody }), { 201: ConnectStarted });
export const connectionsGoogleCallback = routeEndpoint("invites.v1.http.connections.google.callback", httpRequest({ params: Empty, query: OAuthCallbackQuery, body: NoBody }), { 200: CalendarConnection, 303: REDIRECT });
export const connectionsStartMicrosoft = routeEndpoint("invites.v1.http.connections.microsoft.start", httpRequest({ params: Empty, query: Empty, body: NoBody }), { 201: ConnectStarted });
export const connectionsMicrosoftCallback = routeEndpoint("invites.v1.http.connections.microsoft.callback", httpRequest({ params: Empty, query: MicrosoftCallbackQuery, body: NoBody }), { 200: CalendarConnection, 303: REDIRECT });
export const connectionsConnectCalDav = routeEndpoint("invites.v1.http.connections.caldav.connect", httpRequest({ params: Empty, query: Empty, body: CalDavConnectBody }), { 201: CalendarConnection });
export const connectionsCalendars = routeEndpoint("invites.v1.http.connections.calendars", httpRequest({ params: ConnectionIdParams, query: Empty, body: NoBody }), { 200: ProviderCalendarList });
export const connectionsUpdate = routeEndpoint("invites.v1.http.connections.update", httpRequest({ params: ConnectionIdParams, query: Empty, body: ConnectionUpdateBody }), { 200: CalendarConnection });
export const connectionsList = routeEndpoint("invites.v1.http.connections.list", httpRequest({ params: Empty, query: Empty, body: NoBody }), { 200: CalendarConnectionList });
export const connectionsDelete = routeEndpoint("invites.v1.http.connections.delete", httpRequest({ params: ConnectionIdParams, query: Empty, body: NoBody }), { 204: null });
export const connectionsAdminAttach = routeEndpoint(
  "invites.v1.http.admin.connections.attach",
  httpRequest({ params: UserIdParams, query: Empty, body: AdminAttachConnectionBody }),
  { 201: CalendarConnection },
);

/** What Graph sends to a subscription's address: the handshake's token when one is opened, else nothing in the query. */
const GraphNotificationQuery = z.strictObject({
  validationToken: Text.min(1).max(1_024).optional().meta({ description: "Graph's handshake when a subscription is opened (never empty): answered as plain text, and nothing else is done." }),
});

/** Graph's change notifications, of which only the subscription and its secret are read. */
const GraphNotificationBody = z
  .object({
    value: z
      .array(z.looseObject({
        subscriptionId: Text.max(256).meta({ description: "The subscription the change was noticed by." }),
        clientState: Text.max(256).optional().meta({ description: "The secret given when the subscription was opened; a change without the right one is ignored." }),
      }))
      .max(1_000)
      .meta({ description: "The changes notified, each naming its subscription and carrying its secret (`clientState`)." }),
  })
  .optional();

export const providerNotificationsGoogle = routeEndpoint("invites.v1.http.provider-notifications.google", httpRequest({ params: Empty, query: Empty, body: NoBody }), { 202: null });
export const providerNotificationsMicrosoft = routeEndpoint("invites.v1.http.provider-notifications.microsoft", httpRequest({ params: Empty, query: GraphNotificationQuery, body: GraphNotificationBody }), { 200: z.string(), 202: null });

export const invitesRoutes: RouteDef[] = [
  route({ method: "GET", path: "/v1/meetings/:id/invites", endpoint: invitesList, operationId: "invitesList", auth: "api-key", scope: "meetings:read", bucket: "standard", hasBody: false, summary: "Invite deliveries of a meeting, per participant", responses: { 200: "The newest delivery to each participant (removed ones included); empty when no invite was sent" } }),
  route({ method: "POST", path: "/v1/calendar-connections/google", endpoint: connectionsStartGoogle, operationId: "invitesConnectionsGoogleStart", auth: "api-key", scope: "account:write", bucket: "standard", hasBody: false, idempotent: true, summary: "Start connecting Google Calendar (OAuth 2.0)", responses: { 201: "The consent URL to send the user to" } }),
  route({ method: "GET", path: "/v1/calendar-connections/google/callback", endpoint: connectionsGoogleCallback, operationId: "invitesConnectionsGoogleCallback", auth: "none", hasBody: false, summary: "Google's redirect after consent (called by the browser, without a key)", responses: { 200: "The connection made (a consent started through the API)", 303: "A consent started in the dashboard: back to its calendars page, with the outcome (`consent=connected|refused|error`) in the address" } }),
  route({ method: "POST", path: "/v1/calendar-connections/microsoft", endpoint: connectionsStartMicrosoft, operationId: "invitesConnectionsMicrosoftStart", auth: "api-key", scope: "account:write", bucket: "standard", hasBody: false, idempotent: true, summary: "Start connecting a Microsoft 365 / Outlook.com calendar (OAuth 2.0, Microsoft Graph)", responses: { 201: "The consent URL to send the user to" } }),
  route({ method: "GET", path: "/v1/calendar-connections/microsoft/callback", endpoint: connectionsMicrosoftCallback, operationId: "invitesConnectionsMicrosoftCallback", auth: "none", hasBody: false, summary: "Microsoft's redirect after consent (called by the browser, without a key)", responses: { 200: "The connection made (a consent started through the API)", 303: "A consent started in the dashboard: back to its calendars page, with the outcome (`consent=connected|refused|error`) in the address" } }),
  route({ method: "POST", path: "/v1/calendar-connections/caldav", endpoint: connectionsConnectCalDav, operationId: "invitesConnectionsCaldavConnect", auth: "api-key", scope: "account:write", bucket: "standard", hasBody: true, idempotent: true, summary: "Connect a CalDAV account (checked with the server first)", responses: { 201: "The connection made" }, errors: ["forbidden"] }),
  route({ method: "GET", path: "/v1/calendar-connections/:id/calendars", endpoint: connectionsCalendars, operationId: "invitesConnectionsCalendars", auth: "api-key", scope: "account:read", bucket: "standard", hasBody: false, summary: "The calendars of a connection, and which count as busy", responses: { 200: "Every calendar that holds events" }, errors: ["forbidden"] }),
  route({ method: "PATCH", path: "/v1/calendar-connections/:id", endpoint: connectionsUpdate, operationId: "invitesConnectionsUpdate", auth: "api-key", scope: "account:write", bucket: "standard", hasBody: true, summary: "Choose the busy calendars of a connection, or make it the default", responses: { 200: "The connection after the change" }, errors: ["forbidden"] }),
  route({ method: "GET", path: "/v1/calendar-connections", endpoint: connectionsList, operationId: "invitesConnectionsList", auth: "api-key", scope: "account:read", bucket: "standard", hasBody: false, summary: "The user's calendar connections", responses: { 200: "Every connection, newest first" } }),
  route({ method: "DELETE", path: "/v1/calendar-connections/:id", endpoint: connectionsDelete, operationId: "invitesConnectionsDelete", auth: "api-key", scope: "account:write", bucket: "standard", hasBody: false, summary: "Remove a calendar connection", responses: { 204: "Removed; invites go by e-mail from now on" } }),
  route({ method: "POST", path: "/v1/provider-notifications/google", endpoint: providerNotificationsGoogle, operationId: "invitesProviderNotificationsGoogle", auth: "none", hasBody: false, summary: "Google Calendar's push notifications of an organizer's calendar changing (called by Google, without a key)", responses: { 202: "Taken; a channel or token not ours is ignored the same way" } }),
  route({ method: "POST", path: "/v1/provider-notifications/microsoft", endpoint: providerNotificationsMicrosoft, operationId: "invitesProviderNotificationsMicrosoft", auth: "none", hasBody: true, summary: "Microsoft Graph's change notifications of an organizer's calendar (called by Graph, without a key)", responses: { 200: "The subscription handshake: `validationToken` back, as plain text", 202: "Taken; a subscription or clientState not ours is ignored the same way" } }),
  route({ method: "POST", path: "/admin/v1/users/:id/calendar-connections", endpoint: connectionsAdminAttach, operationId: "invitesAdminConnectionsAttach", auth: "admin", hasBody: true, summary: "Attach a calendar connection with given tokens (tests and demos)", responses: { 201: "The connection" } }),
];

// ---- internal endpoints ----------------------------------------------------------

/**
 * Busy time from the connected calendars of up to 101 users over [from, to),
 * per user (users without a connection get none). `complete` is false when
 * a provider did not answer in time or failed, and `incompleteUserIds` says
 * whose: the caller then goes on without that busy time rather than
 * waiting, and says so where the answer depends on it.
 */
/** How a consent started in the dashboard ended, as the callback tells the dashboard's calendars page (`?consent=…`). */
export const CONSENT_OUTCOMES = ["connected", "refused", "error"] as const;
export const ConsentOutcome = z.enum(CONSENT_OUTCOMES);
export type ConsentOutcome = z.infer<typeof ConsentOutcome>;

/** The providers connected by OAuth consent. */
export const OAuthProvider = CalendarProvider.extract(["google", "microsoft"]);
export type OAuthProvider = z.infer<typeof OAuthProvider>;

/**
 * Starts a consent for the dashboard's signed-in user: as the public start
 * endpoints, but the provider's redirect then ends on the dashboard's
 * calendars page (303) instead of answering JSON.
 */
export const invitesStartDashboardConsent = endpoint("invites.v1.connections.dashboard-consent.start", z.object({ userId: z.string(), provider: OAuthProvider }), ConnectStarted);

/**
 * Whether a user's connected calendars can add busy time in this mode (an
 * active connection, live mode): the gateway asks it once per caller it
 * caches, and invites sends `caller-changed` before it answers a connection
 * made or removed, so no cached caller says "none" once the client knows of one.
 */
export const invitesCalendarConnected = endpoint("invites.v1.calendar-connected", z.object({ mode: Mode, userId: z.string() }), z.object({ connected: z.boolean() }));

export const invitesCalendarBusy = endpoint(
  "invites.v1.calendar-busy",
  z
    .object({ mode: Mode, userIds: z.array(z.string()).max(MAX_BUSY_USERS), from: Timestamp, to: Timestamp })
    .refine((r) => r.from < r.to, { message: "from must be before to", path: ["to"] }),
  z.object({
    busy: z.array(z.object({ userId: z.string(), intervals: z.array(BusyInterval) })),
    complete: z.boolean(),
    /** The users whose provider did not answer; absent from replies of an earlier release (then `complete` alone tells). */
    incompleteUserIds: z.array(z.string()).optional(),
    /** Which of their calendars did not answer, by provider; absent from replies of an earlier release. */
    missingCalendars: z.array(z.object({ userId: z.string(), provider: CalendarProvider })).optional(),
  }),
);
