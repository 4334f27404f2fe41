import { z } from "zod";
import { routeEndpoint } from "./contract.js";
import { Empty, NoBody, Text, Timestamp, httpRequest } from "./common.js";
import { DateOrDateTimeInput } from "./meetings.js";
import { route, type RouteDef } from "./route.js";

// ---- resource ------------------------------------------------------------

/** Time the user is away: busy for everyone who may see their time, its reason for them alone. */
export const TimeOff = z.object({
  id: z.string().meta({ description: "The time off id (`off_…`).", example: "off_3vN8qLxT5bR2mK9pW4cY7zHd" }),
  start: Timestamp.meta({ description: "When the time off begins, in UTC." }),
  end: Timestamp.meta({ description: "When the time off ends (exclusive), in UTC.", example: "2026-05-06T22:00:00Z" }),
  reason: z.string().meta({ description: "Why, for the user alone: others who may see the user's time see only busy. `\"\"` when none was given." }),
  createdAt: Timestamp.meta({ description: "When the time off was recorded." }),
});
export type TimeOff = z.infer<typeof TimeOff>;

export const TimeOffList = z.object({
  data: z.array(TimeOff).meta({ description: "Every time off of the user in this mode, earliest start first." }),
});
export type TimeOffList = z.infer<typeof TimeOffList>;

/** The most time off entries one user keeps in one mode. */
export const MAX_TIME_OFF_ENTRIES = 500;
/** The longest one time off may last, in days. */
export const MAX_TIME_OFF_DAYS = 366;

// ---- requests ----------------------------------------------------------------


export const TimeOffCreateBody = z.strictObject({
  start: DateOrDateTimeInput.meta({
    description: "When it begins: a date (that day's start in the user's zone) or an ISO 8601 datetime (without an offset, read in the user's zone).",
    example: "2026-05-04",
  }),
  end: DateOrDateTimeInput.meta({
    description: `When it ends: a date (that whole day included, to the next day's start in the user's zone) or an ISO 8601 datetime; after \`start\`, at most ${MAX_TIME_OFF_DAYS} days later.`,
    example: "2026-05-06",
  }),
  reason: Text.trim().max(500).optional().meta({ description: "Why, at most 500 characters; shown to the user alone." }),
});
export type TimeOffCreateBody = z.output<typeof TimeOffCreateBody>;

export const TimeOffParams = z.strictObject({ id: Text.meta({ description: "The time off id (`off_…`).", example: "off_3vN8qLxT5bR2mK9pW4cY7zHd" }) });

// ---- public routes -----------------------------------------------------------

export const timeOffCreate = routeEndpoint("meetings.v1.http.time-off.create", httpRequest({ params: Empty, query: Empty, body: TimeOffCreateBody }), { 201: TimeOff });
export const timeOffList = routeEndpoint("meetings.v1.http.time-off.list", httpRequest({ params: Empty, query: Empty, body: NoBody }), { 200: TimeOffList });
export const timeOffDelete = routeEndpoint("meetings.v1.http.time-off.delete", httpRequest({ params: TimeOffParams, query: Empty, body: NoBody }), { 204: null });

export const timeOffRoutes: RouteDef[] = [
  route({ method: "POST", path: "/v1/me/time-off", endpoint: timeOffCreate, operationId: "meetingsTimeOffCreate", auth: "api-key", scope: "account:write", bucket: "standard", hasBody: true, idempotent: true, summary: "Record time off (whole days or hours)", responses: { 201: "The time off recorded: busy in day views, free-busy and recommended times from now on" } }),
  route({ method: "GET", path: "/v1/me/time-off", endpoint: timeOffList, operationId: "meetingsTimeOffList", auth: "api-key", scope: "account:read", bucket: "standard", hasBody: false, summary: "List the user's time off", responses: { 200: "Every time off, earliest first" } }),
  route({ method: "DELETE", path: "/v1/me/time-off/:id", endpoint: timeOffDelete, operationId: "meetingsTimeOffDelete", auth: "api-key", scope: "account:write", bucket: "standard", hasBody: false, summary: "Remove a time off", responses: { 204: "Removed: that time is free again" } }),
];
