import { z } from "zod";
import { routeEndpoint } from "./contract.js";
import { Empty, Mode, NoBody, Text, Timestamp, httpRequest } from "./common.js";
import { MeetingInvite } from "./invites.js";
import { Meeting } from "./meetings.js";
import { route, type RouteDef } from "./route.js";

// ---- public events (api-decisions part 12) -----------------------------------------

export const EVENT_TYPES = ["meeting.created", "meeting.updated", "meeting.cancelled", "meeting.deleted", "meeting.response_updated", "invite.sent", "invite.failed"] as const;
export const EventType = z.enum(EVENT_TYPES).meta({
  description:
    "What happened: `meeting.created`, `meeting.updated`, `meeting.cancelled`, `meeting.deleted` (removed by its organizer), `meeting.response_updated` (a participant answered), `invite.sent` (an invite was handed to the provider; in test mode, simulated) or `invite.failed` (given up after the last try).",
});
export type EventType = z.infer<typeof EventType>;

/** The earlier values of the fields an update changed. */
export const MeetingPrevious = Meeting.pick({ title: true, description: true, startTime: true, duration: true, participants: true, status: true, attendees: true, recurrence: true })
  .partial()
  .meta({ description: "The earlier values of exactly the fields the change touched; for `meeting.response_updated`, `attendees` holds only the participant who answered, with their earlier answer." });
export type MeetingPrevious = z.infer<typeof MeetingPrevious>;

export const EventData = z.object({
  /** A meeting (for `meeting.deleted`, its last state, marked `cancelled`), or for `invite.*` the invite as `/invites` lists it. */
  object: z.union([Meeting, MeetingInvite]).meta({ description: "For `meeting.*` events the meeting as `GET /v1/meetings/:id` returns it; for `invite.*` events the invite as `GET /v1/meetings/:id/invites` lists it." }),
  previous: MeetingPrevious.optional(),
});

/** One public event, as `GET /v1/events` lists it and a webhook delivery carries it. */
export const PublicEvent = z.object({
  id: z.string().meta({ description: "The event id (`evt_…`); also the `webhook-id` of every delivery of it, so a receiver can drop repeats.", example: "evt_3nR8sVbQ2xL7tKmP0aZcY9dF" }),
  type: EventType,
  createdAt: Timestamp.meta({ description: "When the change happened." }),
  mode: Mode,
  data: EventData.meta({ description: "The resource the event is about, and for updates its earlier values." }),
});
export type PublicEvent = z.infer<typeof PublicEvent>;

export const EventList = z.object({
  data: z.array(PublicEvent).meta({ description: "The page's events, newest first." }),
  hasMore: z.boolean().meta({ description: "Whether older events follow: continue with `startingAfter` set to the last id of `data`." }),
});

/** The longest page a list of events or deliveries returns. */
export const MAX_EVENTS_PAGE = 100;

const PageLimit = Text.regex(/^\d{1,3}$/, `must be an integer between 1 and ${MAX_EVENTS_PAGE}`)
  .transform(Number)
  .refine((n) => n >= 1 && n <= MAX_EVENTS_PAGE, `must be an integer between 1 and ${MAX_EVENTS_PAGE}`)
  .optional()
  .meta({ type: "integer", minimum: 1, maximum: MAX_EVENTS_PAGE, default: 20, description: "Most items in the page." });

export const EventListQuery = z.strictObject({
  limit: PageLimit,
  startingAfter: Text.max(64).optional().meta({ description: "Continues the list after this event id (the last one of the previous page).", example: "evt_3nR8sVbQ2xL7tKmP0aZcY9dF" }),
  type: EventType.optional().meta({ description: "Only events of this type." }),
});

export const EventIdParams = z.strictObject({ id: Text.meta({ description: "The event id (`evt_…`).", example: "evt_3nR8sVbQ2xL7tKmP0aZcY9dF" }) });

// ---- webhook endpoints ------------------------------------------------------------------

/** `*` subscribes to every type, present and future. */
export const EndpointEventFilter = z.union([EventType, z.literal("*")]).meta({ description: "An event type, or `*` for every type." });

export const WebhookEndpoint = z.object({
  id: z.string().meta({ description: "The endpoint id (`whe_…`).", example: "whe_5kT2sVnB8xR1tLmP4aZcY7dQ" }),
  url: z.string().meta({ description: "Where events are POSTed.", example: "https://example.com/webhooks/scheduling" }),
  events: z.array(EndpointEventFilter).meta({ description: "The event types sent here; `[\"*\"]` is every type." }),
  description: z.string().meta({ description: "The endpoint's label; `\"\"` when none was given." }),
  enabled: z.boolean().meta({ description: "Whether events are sent; false when turned off, or when every delivery failed for the whole retry window (3 days)." }),
  mode: Mode,
  createdAt: Timestamp.meta({ description: "When the endpoint was made." }),
});
export type WebhookEndpoint = z.infer<typeof WebhookEndpoint>;

export const WebhookEndpointCreated = WebhookEndpoint.extend({
  secret: z.string().meta({ description: "The signing secret (`whsec_…`): shown only in this answer (and by roll-secret).", example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" }),
});

export const WebhookEndpointList = z.object({
  data: z.array(WebhookEndpoint).meta({ description: "The endpoints of the key's mode, newest first." }),
});

export const WebhookEndpointUrl = Text.max(2_048)
  .pipe(z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" }))
  .meta({ description: "Where events are POSTed: `https` for live endpoints; never an address of a private, loopback or link-local network unless the deployment allows it.", example: "https://example.com/webhooks/scheduling" });

const EventFilters = z.array(EndpointEventFilter).min(1).max(EVENT_TYPES.length + 1).meta({ description: "The event types to send; `[\"*\"]` (the default) is every type." });
const EndpointDescription = Text.max(500).meta({ description: "A label for the endpoint, at most 500 characters." });

export const WebhookEndpointCreateBody = z.strictObject({
  url: WebhookEndpointUrl,
  events: EventFilters.optional(),
  description: EndpointDescription.optional(),
});

export const WebhookEndpointUpdateBody = z.strictObject({
  url: WebhookEndpointUrl.optional(),
  events: EventFilters.optional(),
  description: EndpointDescription.optional(),
  enabled: z.boolean().optional().meta({ description: "Turns sending on or off; turning it on again resumes the deliveries waiting." }),
});

export const WebhookEndpointIdParams = z.strictObject({ id: Text.meta({ description: "The endpoint id (`whe_…`).", example: "whe_5kT2sVnB8xR1tLmP4aZcY7dQ" }) });

export const SecretRolled = z.object({
  secret: z.string().meta({ description: "The new signing secret (`whsec_…`), shown only here; the old one keeps signing beside it for 24 hours." }),
  previousSecretExpiresAt: Timestamp.meta({ description: "Until when deliveries also carry a signature by the old secret." }),
});

// ---- deliveries ------------------------------------------------------------------------

export const DELIVERY_STATES = ["pending", "delivered", "failed"] as const;
export const DeliveryState = z.enum(DELIVERY_STATES).meta({ description: "`pending`: not delivered yet (possibly retrying); `delivered`: a 2xx answer came; `failed`: given up after the retry window." });

export const DeliveryAttempt = z.object({
  at: Timestamp.meta({ description: "When the attempt was made." }),
  status: z.number().int().nullable().meta({ description: "The receiver's HTTP status; null when none came (timeout, refused address, network error)." }),
  error: z.string().nullable().meta({ description: "Why the attempt failed, when it did." }),
  durationMs: z.number().int().meta({ description: "How long the attempt took, in milliseconds." }),
});

export const WebhookDelivery = z.object({
  id: z.string().meta({ description: "The delivery id (`whd_…`).", example: "whd_8pL3sVnB2xR7tKmQ0aZcY1dW" }),
  eventId: z.string().meta({ description: "The event delivered (`evt_…`); the `webhook-id` header." }),
  eventType: EventType,
  state: DeliveryState,
  attempts: z.array(DeliveryAttempt).meta({ description: "Every attempt so far, oldest first." }),
  nextAttemptAt: Timestamp.nullable().meta({ description: "When the next attempt is due; null once delivered or failed." }),
  createdAt: Timestamp.meta({ description: "When the delivery was queued." }),
});
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

export const WebhookDeliveryList = z.object({
  data: z.array(WebhookDelivery).meta({ description: "The endpoint's deliveries, newest first." }),
  hasMore: z.boolean().meta({ description: "Whether older deliveries follow: continue with `startingAfter` set to the last id of `data`." }),
});

export const DeliveryListQuery = z.strictObject({
  limit: PageLimit,
  startingAfter: Text.max(64).optional().meta({ description: "Continues the list after this delivery id.", example: "whd_8pL3sVnB2xR7tKmQ0aZcY1dW" }),
});

export const ResendQueued = z.object({
  data: z.array(WebhookDelivery).meta({ description: "One new delivery per enabled endpoint the event's type is sent to." }),
});

// ---- public routes -----------------------------------------------------------------------

export const eventsList = routeEndpoint("webhooks.v1.http.events.list", httpRequest({ params: Empty, query: EventListQuery, body: NoBody }), { 200: EventList });
export const eventsGet = routeEndpoint("webhooks.v1.http.events.get", httpRequest({ params: EventIdParams, query: Empty, body: NoBody }), { 200: PublicEvent });
export const eventsResend = routeEndpoint("webhooks.v1.http.events.resend", httpRequest({ params: EventIdParams, query: Empty, body: NoBody }), { 202: ResendQueued });
export const webhookEndpointsCreate = routeEndpoint("webhooks.v1.http.endpoints.create", httpRequest({ params: Empty, query: Empty, body: WebhookEndpointCreateBody }), { 201: WebhookEndpointCreated });
export const webhookEndpointsList = routeEndpoint("webhooks.v1.http.endpoints.list", httpRequest({ params: Empty, query: Empty, body: NoBody }), { 200: WebhookEndpointList });
export const webhookEndpointsGet = routeEndpoint("webhooks.v1.http.endpoints.get", httpRequest({ params: WebhookEndpointIdParams, query: Empty, body: NoBody }), { 200: WebhookEndpoint });
export const webhookEndpointsUpdate = routeEndpoint("webhooks.v1.http.endpoints.update", httpRequest({ params: WebhookEndpointIdParams, query: Empty, body: WebhookEndpointUpdateBody }), { 200: WebhookEndpoint });
export const webhookEndpointsDelete = routeEndpoint("webhooks.v1.http.endpoints.delete", httpRequest({ params: WebhookEndpointIdParams, query: Empty, body: NoBody }), { 204: null });
export const webhookEndpointsRollSecret = routeEndpoint("webhooks.v1.http.endpoints.roll-secret", httpRequest({ params: WebhookEndpointIdParams, query: Empty, body: NoBody }), { 200: SecretRolled });
export const webhookDeliveriesList = routeEndpoint("webhooks.v1.http.endpoints.deliveries", httpRequest({ params: WebhookEndpointIdParams, query: DeliveryListQuery, body: NoBody }), { 200: WebhookDeliveryList });

export const webhooksRoutes: RouteDef[] = [
  route({ method: "GET", path: "/v1/events", endpoint: eventsList, operationId: "webhooksEventsList", auth: "api-key", scope: "events:read", bucket: "standard", hasBody: false, summary: "List the events of the last 30 days", responses: { 200: "One page of events, newest first" } }),
  route({ method: "GET", path: "/v1/events/:id", endpoint: eventsGet, operationId: "webhooksEventsGet", auth: "api-key", scope: "events:read", bucket: "standard", hasBody: false, summary: "Retrieve one event", responses: { 200: "The event" } }),
  route({ method: "POST", path: "/v1/events/:id/resend", endpoint: eventsResend, operationId: "webhooksEventsResend", auth: "api-key", scope: "webhooks:write", bucket: "standard", hasBody: false, idempotent: true, summary: "Send an event again to the endpoints it is sent to", responses: { 202: "The deliveries queued" } }),
  route({ method: "POST", path: "/v1/webhook-endpoints", endpoint: webhookEndpointsCreate, operationId: "webhooksEndpointsCreate", auth: "api-key", scope: "webhooks:write", bucket: "standard", hasBody: true, idempotent: true, summary: "Create a webhook endpoint", responses: { 201: "The endpoint, with its signing secret (shown only here)" } }),
  route({ method: "GET", path: "/v1/webhook-endpoints", endpoint: webhookEndpointsList, operationId: "webhooksEndpointsList", auth: "api-key", scope: "webhooks:read", bucket: "standard", hasBody: false, summary: "List the webhook endpoints", responses: { 200: "Every endpoint of the key's mode, newest first" } }),
  route({ method: "GET", path: "/v1/webhook-endpoints/:id", endpoint: webhookEndpointsGet, operationId: "webhooksEndpointsGet", auth: "api-key", scope: "webhooks:read", bucket: "standard", hasBody: false, summary: "Retrieve a webhook endpoint", responses: { 200: "The endpoint (never its secret)" } }),
  route({ method: "PATCH", path: "/v1/webhook-endpoints/:id", endpoint: webhookEndpointsUpdate, operationId: "webhooksEndpointsUpdate", auth: "api-key", scope: "webhooks:write", bucket: "standard", hasBody: true, summary: "Update a webhook endpoint", responses: { 200: "The endpoint after the change" } }),
  route({ method: "DELETE", path: "/v1/webhook-endpoints/:id", endpoint: webhookEndpointsDelete, operationId: "webhooksEndpointsDelete", auth: "api-key", scope: "webhooks:write", bucket: "standard", hasBody: false, summary: "Remove a webhook endpoint", responses: { 204: "Removed; nothing more is sent to it" } }),
  route({ method: "POST", path: "/v1/webhook-endpoints/:id/roll-secret", endpoint: webhookEndpointsRollSecret, operationId: "webhooksEndpointsRollSecret", auth: "api-key", scope: "webhooks:write", bucket: "standard", hasBody: false, idempotent: true, summary: "Replace the signing secret (the old one signs too for 24 hours)", responses: { 200: "The new secret, shown only here" } }),
  route({ method: "GET", path: "/v1/webhook-endpoints/:id/deliveries", endpoint: webhookDeliveriesList, operationId: "webhooksEndpointsDeliveries", auth: "api-key", scope: "webhooks:read", bucket: "standard", hasBody: false, summary: "List an endpoint's deliveries and their attempts", responses: { 200: "One page of deliveries, newest first" } }),
];
