import { z } from "zod";
import { routeEndpoint } from "./contract.js";
import { DateText, Email, Empty, NoBody, Timestamp, httpRequest } from "./common.js";
import { CalendarProvider } from "./invites.js";
import { Duration, Participants } from "./meetings.js";
import { route, type RouteDef } from "./route.js";

// ---- resources -------------------------------------------------------------

export const SLOT_STATUSES = ["free", "busy"] as const;
export const SlotStatus = z.enum(SLOT_STATUSES).meta({ description: "`busy`: a confirmed meeting, time off or the connected calendar's busy time; `free`: none of them." });

/** One slot of a day view: local times of day on the `timezone` clock (api-spec 2.4). */
export const DaySlot = z.object({
  start: z.string().regex(/^\d{2}:\d{2}$/).meta({ description: "Where the slot begins, `HH:MM` on the `timezone` clock.", example: "09:00" }),
  /** "24:00" only for an end at the following midnight. */
  end: z.string().regex(/^\d{2}:\d{2}$/).meta({ description: "Where the slot ends, `HH:MM` on the `timezone` clock; `24:00` for the following midnight.", example: "10:30" }),
  status: SlotStatus,
});

/** GET /v1/availability answers this (api-spec 2.4). */
export const DayViewBody = z.object({
  date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/).meta({ description: "The day shown, `YYYY-MM-DD`.", example: "2030-03-06" }),
  timezone: z.string().meta({ description: "The IANA time zone of the user whose day it is; the slots' times are on its clock.", example: "Europe/Berlin" }),
  slots: z.array(DaySlot).meta({ description: "Free and busy slots tiling that day's working hours, in order; empty on a day without working hours." }),
  busyComplete: z.literal(false).optional().describe("Present (false) exactly when a connected calendar of the person did not answer in time: the `free` slots may then be busy there; treat them as unknown."),
  missingCalendars: z.array(CalendarProvider).optional().describe("With `busyComplete`: the providers of the calendars that did not answer (empty when the calendars could not be asked at all)."),
});
export type DayViewBody = z.infer<typeof DayViewBody>;

export const TIME_RANGES = ["morning", "afternoon", "evening", "any"] as const;
export const TimeRange = z.enum(TIME_RANGES).meta({ description: "Where in the caller's day to look: `morning` 08:00–12:00, `afternoon` 12:00–17:00, `evening` 17:00–21:00, `any` the caller's working hours." });
export type TimeRange = z.infer<typeof TimeRange>;

/** Why a recommendation found nothing, as a stable code a client can branch on. */
export const EMPTY_REASONS = ["horizon_too_short", "minimum_notice", "outside_working_hours", "buffers", "no_common_free_time", "minimum_attendees"] as const;
export const EmptyReason = z.enum(EMPTY_REASONS).meta({
  description:
    "Why no slot fits, the first rule that emptied the result: `horizon_too_short` (no start with room for the meeting), `minimum_notice` (there would be, but not after the notice), `outside_working_hours` (`any` only: no start inside the caller's hours), `buffers` (there would be common free time, but not with everyone's stated buffer around their busy time), `no_common_free_time` (a required person is busy at every start), `minimum_attendees` (the required people are free, but never with enough optional ones to reach `minimumAttendees`).",
});
export type EmptyReason = z.infer<typeof EmptyReason>;

export const RANKERS = ["heuristic", "ai"] as const;
export const RankedBy = z.enum(RANKERS).meta({ description: "`ai` when the AI ranking answered, `heuristic` otherwise (also without `useAI`)." });
export type RankedBy = z.infer<typeof RankedBy>;

/** A recommended slot (api-spec 2.5) with the extension of api-decisions 7. */
export const RecommendedSlot = z.object({
  start: Timestamp.meta({ description: "When the slot starts, on the local 15-minute grid." }),
  end: Timestamp.meta({ description: "When the slot ends: `start` plus the duration.", example: "2026-05-04T10:00:00Z" }),
  score: z.number().min(0).max(1).meta({ description: "How good the slot is, from 0 to 1; slots come highest first.", example: 0.87 }),
  reason: z.string().meta({ description: "One sentence saying why the slot is recommended." }),
  /** E-mails of the counted people, the caller included, whose working hours hold the whole slot. */
  withinWorkingHours: z.array(z.string()).meta({ description: "E-mails of the counted people, the caller included, whose working hours hold the whole slot." }),
  availableParticipants: z
    .array(z.string())
    .optional()
    .meta({ description: "Present when some counted optional participant is busy then: e-mails of the counted people free for the whole slot, the caller and every required one included." }),
});
export type RecommendedSlot = z.infer<typeof RecommendedSlot>;

/** A counted person whose busy time may miss a connected calendar that did not answer. */
export const IncompleteBusyPerson = z.object({
  email: z.string().meta({ description: "The person's e-mail (the caller's own included), lower-cased.", example: "bo@example.com" }),
  missingCalendars: z.array(CalendarProvider).describe("The providers of their calendars that did not answer (empty when the calendars could not be asked at all)."),
});

/** POST /v1/availability/recommended answers this. */
export const RecommendationBody = z.object({
  slots: z.array(RecommendedSlot).meta({ description: "The recommended slots, best first; at most `limit`." }),
  /** The participants (never the caller) whose availability was taken into account. */
  consideredParticipants: z.array(z.string()).meta({ description: "E-mails of the participants (never the caller) who count: those with an account who share visibility with the caller." }),
  consideredOptionalParticipants: z.array(z.string()).meta({ description: "E-mails of the optional participants who count, by the same rule; empty when none were given." }),
  rankedBy: RankedBy,
  /** Present exactly when `slots` is empty. */
  emptyReason: EmptyReason.optional().meta({ description: "Present exactly when `slots` is empty: why nothing fits." }),
  busyComplete: z.literal(false).optional().describe("Present (false) exactly when a connected calendar of a counted person (the caller included) did not answer in time: the slots may then clash with busy time there; `incompleteBusy` names whose."),
  incompleteBusy: z.array(IncompleteBusyPerson).optional().describe("With `busyComplete`: each counted person whose calendar did not answer, in the order counted (the caller first), with the providers missing."),
});
export type RecommendationBody = z.infer<typeof RecommendationBody>;

/** A busy interval of a free-busy answer, `[start, end)` in UTC. */
export const BusyPeriod = z.object({
  start: Timestamp.meta({ description: "When the busy time begins (or the range's `from`, where it began earlier)." }),
  end: Timestamp.meta({ description: "When the busy time ends (or the range's `to`, where it goes on), exclusive.", example: "2026-05-04T10:30:00Z" }),
});

/** One visible person of a free-busy answer. */
export const FreeBusyPerson = z.object({
  email: z.string().meta({ description: "The person's e-mail, as listed in `participants` (lower-cased).", example: "bo@example.com" }),
  busy: z.array(BusyPeriod).meta({ description: "Their busy time inside the range, in UTC: confirmed meetings, time off and connected calendars, merged (none overlap or touch), cut to the range, in order." }),
  busyComplete: z.boolean().meta({ description: "False when a connected calendar of theirs did not answer in time: `busy` may then miss some of their time; treat it as unknown, not free." }),
  missingCalendars: z.array(CalendarProvider).optional().describe("Present exactly when `busyComplete` is false: the providers of the calendars that did not answer (empty when the calendars could not be asked at all)."),
});

/** POST /v1/availability/free-busy answers this. */
export const FreeBusyAnswer = z.object({
  from: Timestamp.meta({ description: "The range's start, in UTC." }),
  to: Timestamp.meta({ description: "The range's end (exclusive), in UTC.", example: "2026-05-11T00:00:00Z" }),
  people: z.array(FreeBusyPerson).meta({ description: "Each listed person whose time the caller may see (the caller, and those who share visibility with the caller), in the order listed." }),
  notVisible: z.array(z.string()).meta({ description: "E-mails of the listed people whose time the caller may not see (no account, no shared visibility, or a block): unknown, never free.", example: ["dana@example.net"] }),
});
export type FreeBusyAnswer = z.infer<typeof FreeBusyAnswer>;

// ---- requests ----------------------------------------------------------------

/** Query values arrive as strings; a repeated parameter (an array) is refused. */
export const AvailabilityDayQuery = z.strictObject({
  /** YYYY-MM-DD or a relative expression; read by the availability service in the user's zone. */
  date: DateText.max(200).meta({ description: "`YYYY-MM-DD`, or a relative expression read in the user's zone: `today`, `tomorrow`, `yesterday`, `monday`, `next Monday`, `this Friday`, `in 3 days`.", example: "2030-03-06" }),
  /** Extension (api-decisions 6): another user's day view, when they let the caller see it. */
  email: Email.optional().meta({ description: "Another user's day view, in their zone: only when they have the caller as a contact they have not blocked (404 otherwise)." }),
});
export type AvailabilityDayQuery = z.output<typeof AvailabilityDayQuery>;

/** Required and optional people together: the caller and they are asked about in one busy request. */
export const MAX_RECOMMEND_PEOPLE = 100;
/** The longest minimum notice: the horizon's longest span. */
export const MAX_NOTICE_MINUTES = 31 * 24 * 60;

export const RecommendBody = z.strictObject({
  /** 1–100 addresses, lower-cased, duplicates dropped in first-seen order. */
  participants: Participants.meta({ description: "The people to meet, 1–100 e-mail addresses; the caller always counts too. Every counted one must be free for the whole slot." }),
  optionalParticipants: z
    .array(Email)
    .max(MAX_RECOMMEND_PEOPLE)
    .transform((emails) => [...new Set(emails)])
    .default([])
    .meta({ description: `People who may come: counted by the same rule as \`participants\`, preferred free but not required; slots name who of them can come. None of them in \`participants\`; both lists together at most ${MAX_RECOMMEND_PEOPLE} addresses.`, example: ["dana@example.net"] }),
  minimumAttendees: z
    .number()
    .int()
    .min(1)
    .max(MAX_RECOMMEND_PEOPLE + 1)
    .optional()
    .meta({ description: "A quorum: the least number of counted people, the caller included, required and optional together, free for the whole slot. Required people are always free; the quorum asks for enough optional ones besides." }),
  minimumNoticeMinutes: z
    .number()
    .int()
    .min(0)
    .max(MAX_NOTICE_MINUTES)
    .default(0)
    .meta({ description: "No slot starts sooner than this many minutes from now.", example: 120 }),
  duration: Duration,
  timeRange: TimeRange.default("any"),
  useAI: z.boolean().default(false).meta({ description: "Re-rank the best candidates by the users' habits and stated preferences (`rankedBy` says whether that answered)." }),
  /** ISO date or datetime; default now. */
  from: DateText.max(64).optional().meta({ description: "Start of the horizon: an ISO date or datetime (naive ones in the caller's zone); now when absent.", example: "2030-03-04" }),
  /** ISO date (that whole day included) or datetime; default 7 days after `from`, at most 31. */
  to: DateText.max(64).optional().meta({ description: "End of the horizon: an ISO date (that whole day included) or datetime; 7 days after `from` when absent, at most 31 days after it.", example: "2030-03-08" }),
  limit: z.number().int().min(1).max(50).default(10).meta({ description: "The most slots to return." }),
}).superRefine((body, ctx) => {
  const required = new Set(body.participants);
  body.optionalParticipants.forEach((email, i) => {
    if (required.has(email)) ctx.addIssue({ code: "custom", path: ["optionalParticipants", i], message: "is already in participants" });
  });
  if (body.participants.length + body.optionalParticipants.length > MAX_RECOMMEND_PEOPLE) {
    ctx.addIssue({ code: "custom", path: ["optionalParticipants"], message: `participants and optionalParticipants may hold at most ${MAX_RECOMMEND_PEOPLE} addresses together` });
  }
});
export type RecommendBody = z.output<typeof RecommendBody>;

/** The most people one free-busy request may ask about. */
export const MAX_FREE_BUSY_PEOPLE = 50;

export const FreeBusyBody = z.strictObject({
  participants: z
    .array(Email)
    .min(1)
    .max(MAX_FREE_BUSY_PEOPLE)
    .transform((emails) => [...new Set(emails)])
    .meta({ description: `The people whose busy time to show, 1–${MAX_FREE_BUSY_PEOPLE} e-mail addresses (the caller's own included if wanted); duplicates dropped.`, example: ["bo@example.com", "cy@example.org"] }),
  from: DateText.max(64).meta({ description: "Start of the range: an ISO date (that day's start in the caller's zone) or datetime (naive ones in the caller's zone).", example: "2026-05-04" }),
  to: DateText.max(64).meta({ description: "End of the range: an ISO date (that whole day included) or datetime; after `from`, at most 31 days after it.", example: "2026-05-10" }),
});
export type FreeBusyBody = z.output<typeof FreeBusyBody>;

// ---- public routes -----------------------------------------------------------

export const availabilityDay = routeEndpoint(
  "availability.v1.http.day",
  httpRequest({ params: Empty, query: AvailabilityDayQuery, body: NoBody }),
  { 200: DayViewBody },
);
export const availabilityRecommend = routeEndpoint(
  "availability.v1.http.recommend",
  httpRequest({ params: Empty, query: Empty, body: RecommendBody }),
  { 200: RecommendationBody },
);

export const availabilityFreeBusy = routeEndpoint(
  "availability.v1.http.free-busy",
  httpRequest({ params: Empty, query: Empty, body: FreeBusyBody }),
  { 200: FreeBusyAnswer },
);

export const availabilityRoutes: RouteDef[] = [
  route({ method: "GET", path: "/v1/availability", endpoint: availabilityDay, operationId: "availabilityDay", auth: "api-key", scope: "availability:read", bucket: "standard", hasBody: false, summary: "Free and busy slots of one date, in the user's zone", responses: { 200: "The day view" }, errors: ["not_found"] }),
  route({ method: "POST", path: "/v1/availability/free-busy", endpoint: availabilityFreeBusy, operationId: "availabilityFreeBusy", auth: "api-key", scope: "availability:read", bucket: "standard", hasBody: true, idempotent: true, summary: "Busy time of several people over up to 31 days", responses: { 200: "Each visible person's busy time in UTC; the others listed as not visible" } }),
  route({ method: "POST", path: "/v1/availability/recommended", endpoint: availabilityRecommend, operationId: "availabilityRecommend", auth: "api-key", scope: "availability:read", bucket: "ai", hasBody: true, idempotent: true, summary: "Recommended meeting times across participants", responses: { 200: "Recommended slots, best first" } }),
];
