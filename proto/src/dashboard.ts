import { z } from "zod";
import { eventDef, routeEndpoint, type StreamDef } from "./contract.js";
import { Empty, Mode, NoBody, Text, Timestamp, httpRequest } from "./common.js";
import { route, type RouteDef } from "./route.js";

// ---- admin route: a sign-in link for a user (api-decisions 11) -------------

export const SignInLinkCreated = z.object({
  url: z.string().meta({ description: "The dashboard's sign-in link; it works once, until `expiresAt`.", example: "https://api.example.com/dashboard/sign-in?token=sil_3bq2A9dLx7Vk0WmTc5YhR8nJ4sPe6uQf1gZo2iKaNbC" }),
  expiresAt: Timestamp.meta({ description: "When the link stops working: 15 minutes after it was made." }),
});

export const dashboardAdminCreateSignInLink = routeEndpoint(
  "dashboard.v1.http.admin.sign-in-links.create",
  httpRequest({ params: z.strictObject({ id: Text.meta({ description: "The user id (`usr_…`).", example: "usr_kY9pF34Qy6nB3Wwd25rq4f5z" }) }), query: Empty, body: NoBody }),
  { 201: SignInLinkCreated },
);

export const dashboardRoutes: RouteDef[] = [
  route({
    method: "POST",
    path: "/admin/v1/users/:id/sign-in-links",
    endpoint: dashboardAdminCreateSignInLink,
    operationId: "dashboardAdminSignInLinksCreate",
    auth: "admin",
    hasBody: false,
    summary: "Make a single-use sign-in link to the dashboard for a user",
    responses: { 201: "The link, valid once for 15 minutes; only its hash is kept" },
  }),
];

// ---- the request log the gateway feeds -------------------------------------

/** A batch the dashboard has not taken within a day (a dashboard down that long) is dropped rather than kept forever. */
export const REQUEST_LOG_STREAM: StreamDef = { name: "REQUEST_LOG", subjectPrefix: "dashboard.v1.events", maxAgeMs: 24 * 60 * 60_000 };

/** One authenticated request as the gateway answered it: metadata only, never a body or a key. */
export const ServedRequest = z.object({
  /** When the request arrived, UTC with milliseconds. */
  at: z.iso.datetime(),
  requestId: z.string().max(128),
  apiKeyId: z.string(),
  userId: z.string(),
  mode: Mode,
  method: z.string().max(16),
  /** The route's template (`/v1/meetings/:id`), never the path with its ids and query. */
  path: z.string().max(200),
  status: z.number().int().min(100).max(599),
  durationMs: z.number().int().min(0),
});
export type ServedRequest = z.infer<typeof ServedRequest>;

/** The most requests one batch of the request log carries. */
export const MAX_SERVED_PER_BATCH = 500;

/** A batch of requests one gateway replica answered; `batchId` makes a redelivered batch count once. */
export const requestsServed = eventDef(REQUEST_LOG_STREAM, "requests.served", z.object({ batchId: z.string(), requests: z.array(ServedRequest).min(1).max(MAX_SERVED_PER_BATCH) }));
