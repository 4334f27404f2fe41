import { z } from "zod";
import { endpoint } from "./contract.js";
import { DateText, Email, Empty, HttpReply, NoBody, Timestamp, httpRequest } from "./common.js";
import { Duration, Participants } from "./meetings.js";
import type { RouteDef } from "./route.js";

// ---- resources -------------------------------------------------------------

export const SLOT_STATUSES = ["free", "busy"] as const;
export const SlotStatus = z.enum(SLOT_STATUSES);

/** One slot of a day view: local times of day on the `timezone` clock (api-spec 2.4). */
export const DaySlot = z.object({
  start: z.string().regex(/^\d{2}:\d{2}$/),
  /** "24:00" only for an end at the following midnight. */
  end: z.string().regex(/^\d{2}:\d{2}$/),
  status: SlotStatus,
});

/** GET /v1/availability answers this (api-spec 2.4). */
export const DayViewBody = z.object({
  date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  timezone: z.string(),
  slots: z.array(DaySlot),
});
export type DayViewBody = z.infer<typeof DayViewBody>;

export const TIME_RANGES = ["morning", "afternoon", "evening", "any"] as const;
export const TimeRange = z.enum(TIME_RANGES);
export type TimeRange = z.infer<typeof TimeRange>;

/** Why a recommendation found nothing, as a stable code a client can branch on. */
export const EMPTY_REASONS = ["horizon_too_short", "outside_working_hours", "no_common_free_time"] as const;
export const EmptyReason = z.enum(EMPTY_REASONS);
export type EmptyReason = z.infer<typeof EmptyReason>;

export const RANKERS = ["heuristic", "ai"] as const;
export const RankedBy = z.enum(RANKERS);
export type RankedBy = z.infer<typeof RankedBy>;

/** A recommended slot (api-spec 2.5) with the extension of api-decisions 7. */
export const RecommendedSlot = z.object({
  start: Timestamp,
  end: Timestamp,
  score: z.number().min(0).max(1),
  reason: z.string(),
  /** E-mails of the counted people, the caller included, whose working hours hold the whole slot. */
  withinWorkingHours: z.array(z.string()),
});
export type RecommendedSlot = z.infer<typeof RecommendedSlot>;

/** POST /v1/availability/recommended answers this. */
export const RecommendationBody = z.object({
  slots: z.array(RecommendedSlot),
  /** The participants (never the caller) whose availability was taken into account. */
  consideredParticipants: z.array(z.string()),
  rankedBy: RankedBy,
  /** Present exactly when `slots` is empty. */
  emptyReason: EmptyReason.optional(),
});
export type RecommendationBody = z.infer<typeof RecommendationBody>;

// ---- requests ----------------------------------------------------------------

/** Query values arrive as strings; a repeated parameter (an array) is refused. */
export const AvailabilityDayQuery = z.strictObject({
  /** YYYY-MM-DD or a relative expression; read by the availability service in the user's zone. */
  date: DateText.max(200).meta({ description: "`YYYY-MM-DD`, or a relative expression read in the user's zone: `today`, `tomorrow`, `yesterday`, `monday`, `next Monday`, `this Friday`, `in 3 days`.", example: "2030-03-06" }),
  /** Extension (api-decisions 6): another user's day view, when they let the caller see it. */
  email: Email.optional().meta({ description: "Another user's day view, in their zone: only when they have the caller as a contact they have not blocked (404 otherwise)." }),
});
export type AvailabilityDayQuery = z.output<typeof AvailabilityDayQuery>;

export const RecommendBody = z.strictObject({
  /** 1–100 addresses, lower-cased, duplicates dropped in first-seen order. */
  participants: Participants,
  duration: Duration,
  timeRange: TimeRange.default("any"),
  useAI: z.boolean().default(false),
  /** ISO date or datetime; default now. */
  from: DateText.max(64).optional(),
  /** ISO date (that whole day included) or datetime; default 7 days after `from`, at most 31. */
  to: DateText.max(64).optional(),
  limit: z.number().int().min(1).max(50).default(10),
});
export type RecommendBody = z.output<typeof RecommendBody>;

// ---- public routes -----------------------------------------------------------

export const availabilityDay = endpoint(
  "availability.v1.http.day",
  httpRequest({ params: Empty, query: AvailabilityDayQuery, body: NoBody }),
  HttpReply,
);
export const availabilityRecommend = endpoint(
  "availability.v1.http.recommend",
  httpRequest({ params: Empty, query: Empty, body: RecommendBody }),
  HttpReply,
);

export const availabilityRoutes: RouteDef[] = [
  { method: "GET", path: "/v1/availability", endpoint: availabilityDay, auth: "api-key", scope: "availability:read", bucket: "standard", hasBody: false, summary: "Free and busy slots of one date, in the user's zone", responses: [{ status: 200, description: "The day view", body: DayViewBody }], errors: ["not_found"] },
  { method: "POST", path: "/v1/availability/recommended", endpoint: availabilityRecommend, auth: "api-key", scope: "availability:read", bucket: "ai", hasBody: true, idempotent: true, summary: "Recommended meeting times across participants", responses: [{ status: 200, description: "Recommended slots, best first", body: RecommendationBody }] },
];
