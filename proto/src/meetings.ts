import { z } from "zod";
import { endpoint, eventDef, type StreamDef, routeEndpoint } from "./contract.js";
import { DateText, Email, Empty, Mode, NoBody, Text, Timestamp, formatTimestamp, httpRequest } from "./common.js";
import { route, type RouteDef } from "./route.js";

// ---- resource ------------------------------------------------------------

export const DURATIONS = ["15 mins", "30 mins", "45 mins", "1 hour", "1.5 hours", "2 hours"] as const;
export const Duration = z.enum(DURATIONS).meta({ description: "How long the meeting lasts; its end is `startTime` plus this.", example: "30 mins" });
export type Duration = z.infer<typeof Duration>;

/** Each duration's length in minutes. */
export const DURATION_MINUTES: Readonly<Record<Duration, number>> = {
  "15 mins": 15,
  "30 mins": 30,
  "45 mins": 45,
  "1 hour": 60,
  "1.5 hours": 90,
  "2 hours": 120,
};

export const MEETING_STATUSES = ["draft", "confirmed", "cancelled"] as const;
export const MeetingStatus = z.enum(MEETING_STATUSES).meta({ description: "`draft`: announced to nobody yet; `confirmed`: on the calendar; `cancelled`: called off." });
export type MeetingStatus = z.infer<typeof MeetingStatus>;

export const MEETING_FILTERS = ["upcoming", "past", "draft", "all"] as const;
export const MeetingFilter = z.enum(MEETING_FILTERS);
export type MeetingFilter = z.infer<typeof MeetingFilter>;

// ---- responses ------------------------------------------------------------

/** A participant's answer to the invitation, as iCalendar's PARTSTAT names it. */
export const ATTENDEE_RESPONSES = ["needsAction", "accepted", "declined", "tentative"] as const;
export const AttendeeResponse = z
  .enum(ATTENDEE_RESPONSES)
  .describe("`needsAction`: no answer yet (again, after the time changed); `accepted`; `declined`: the meeting is not busy time for them; `tentative`.");
export type AttendeeResponse = z.infer<typeof AttendeeResponse>;

/** The answers a participant can give; `needsAction` is only ever the absence of one. */
export const GIVEN_RESPONSES = ["accepted", "declined", "tentative"] as const;
export const GivenResponse = z.enum(GIVEN_RESPONSES).describe("The answer given: `accepted`, `declined` or `tentative`.");
export type GivenResponse = z.infer<typeof GivenResponse>;

/** Where an answer came from. */
export const RESPONSE_SOURCES = ["email", "google", "microsoft", "caldav"] as const;
export const ResponseSource = z.enum(RESPONSE_SOURCES).describe("Where the answer came from: `email` (the attendee's calendar client replied to the invite), or the organizer's `google`, `microsoft` or `caldav` calendar.");
export type ResponseSource = z.infer<typeof ResponseSource>;

export const Attendee = z.object({
  email: z.string().describe("The participant's address, as in `participants`."),
  response: AttendeeResponse,
  respondedAt: Timestamp.nullable().describe("When the participant answered; null while `needsAction`."),
});
export type Attendee = z.infer<typeof Attendee>;

/** A meeting as GET /v1/meetings/:id, POST and PATCH answer it. */
export const Meeting = z.object({
  id: z.string().meta({ description: "The meeting id (`mtg_…`).", example: "mtg_4kQ9sVnB2xR7tLmP0aZcY8dE" }),
  title: z.string().meta({ description: "The meeting's title." }),
  description: z.string().meta({ description: "The meeting's description; `\"\"` when none was given." }),
  startTime: Timestamp.meta({ description: "When the meeting starts, in UTC." }),
  duration: Duration,
  participants: z.array(z.string()).meta({ description: "The participants' e-mail addresses, lower-cased, in first-seen order." }),
  status: MeetingStatus,
  /** E-mail of the user who created the meeting; only they may update it. */
  organizer: z.string().meta({ description: "The e-mail of the user who created the meeting; only they may change or remove it.", example: "ann@example.com" }),
  createdAt: Timestamp.meta({ description: "When the meeting was created." }),
  attendees: z.array(Attendee).describe("Each participant's answer to the invitation, in the order of `participants`."),
  recurrence: z.string().nullable().meta({ description: "A recurring meeting (a series): its RFC 5545 rule, normalized, without `RRULE:`; expanded in the organizer's time zone. Null for a single meeting and for one occurrence of a series.", example: "FREQ=WEEKLY;BYDAY=TU,TH;COUNT=10" }),
  seriesId: z.string().nullable().meta({ description: "An occurrence of a recurring meeting: the series' id. Null for a single meeting and for the series itself.", example: "mtg_4kQ9sVnB2xR7tLmP0aZcY8dE" }),
  originalStartTime: Timestamp.nullable().meta({ description: "An occurrence: its start as the rule gives it, in UTC (iCalendar's RECURRENCE-ID), which names it even after it is moved. Null for a single meeting and for the series." }),
}).meta({ description: "A meeting, as `GET /v1/meetings/:id` answers it. A recurring meeting is a series (`recurrence` set); each of its occurrences has the id `<series id>_<original start as YYYYMMDDTHHMMSSZ>` and `seriesId`." });
export type Meeting = z.infer<typeof Meeting>;

/** List items leave out the long and rarely needed fields. */
export const MeetingListItem = Meeting.omit({ description: true, createdAt: true, attendees: true });
export type MeetingListItem = z.infer<typeof MeetingListItem>;

export const MeetingList = z.object({
  data: z.array(MeetingListItem).meta({ description: "The page's meetings, in the filter's order; without `description` and `createdAt`." }),
  hasMore: z.boolean().meta({ description: "Whether more meetings follow: continue with `startingAfter` set to the last id of `data`." }),
});
export type MeetingList = z.infer<typeof MeetingList>;

// ---- request bodies ------------------------------------------------------

export const MeetingTitle = Text.trim().min(1).max(200).meta({ description: "The meeting's title, 1–200 characters after trimming.", example: "Quarterly planning" });
export const MeetingDescription = Text.max(10_000).meta({ description: "Free text about the meeting, at most 10,000 characters; `\"\"` when absent." });

/**
 * An ISO 8601 datetime in extended form on a supported date; without an
 * offset it is read in the caller's time zone. Calendar validity and the zone
 * are checked by the meetings service, which knows the caller.
 */
export const DateTimeInput = DateText.max(64)
  .regex(
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?$/,
    "must be an ISO 8601 datetime such as 2026-05-04T09:30:00Z",
  )
  .meta({
    description: "When the meeting starts: an ISO 8601 datetime (seconds, fraction and offset optional); without an offset it is read in the user's time zone. Fractions of a second are dropped.",
    example: "2026-05-04T09:30:00+02:00",
  });

/** 1–100 addresses, lower-cased, duplicates dropped in first-seen order. */
export const Participants = z
  .array(Email)
  .min(1)
  .max(100)
  .transform((emails) => [...new Set(emails)])
  .meta({ description: "1–100 e-mail addresses; stored lower-cased, duplicates dropped in first-seen order.", example: ["bo@example.com", "cy@example.com"] });

/** The most occurrences a series may have, and the longest it may run. */
export const MAX_OCCURRENCES = 730;
export const MAX_SERIES_YEARS = 5;

/**
 * The rule's syntax is checked by the meetings service (it parses it with
 * the recurrence library and counts occurrences in the organizer's zone).
 */
export const RecurrenceInput = Text.min(1).max(500).meta({
  description: `An RFC 5545 recurrence rule, with or without \`RRULE:\`: \`FREQ\` DAILY, WEEKLY, MONTHLY or YEARLY; \`INTERVAL\`, \`COUNT\` or \`UNTIL\`, \`BYDAY\`, \`BYMONTHDAY\`, \`BYMONTH\`, \`BYSETPOS\`; at most ${MAX_OCCURRENCES} occurrences and ${MAX_SERIES_YEARS} years. The series starts at \`startTime\` and keeps its local wall-clock time in the organizer's time zone across daylight-saving changes; an occurrence in a skipped hour moves forward by the gap.`,
  example: "FREQ=WEEKLY;BYDAY=TU,TH;COUNT=10",
});

export const MeetingCreateBody = z.strictObject({
  title: MeetingTitle,
  description: MeetingDescription.optional(),
  duration: Duration,
  startTime: DateTimeInput,
  participants: Participants,
  /** Default true. */
  sendInvites: z.boolean().optional().meta({ description: "Whether participants of a confirmed meeting are sent an invitation.", default: true }),
  /** Default `confirmed`; a meeting is never created cancelled. */
  status: z.enum(["draft", "confirmed"]).optional().meta({ description: "`draft` announces nothing until confirmed; a meeting is never created cancelled.", default: "confirmed" }),
  recurrence: RecurrenceInput.optional(),
});
export type MeetingCreateBody = z.output<typeof MeetingCreateBody>;

export const MeetingUpdateBody = z.strictObject({
  title: MeetingTitle.optional(),
  description: MeetingDescription.optional(),
  duration: Duration.optional(),
  startTime: DateTimeInput.optional(),
  participants: Participants.optional(),
  /** Default true. */
  sendInvites: z.boolean().optional().meta({ description: "Whether participants hear about the change (an update, or a cancellation to removed ones); drafts announce nothing.", default: true }),
  status: MeetingStatus.optional().meta({ description: "The new status: `draft` → `confirmed`, or `draft`/`confirmed` → `cancelled`; the current one again changes nothing." }),
  recurrence: RecurrenceInput.optional().meta({ description: "A series only: the new rule for its occurrences not yet ended (same syntax as on creation). Refused on a single meeting and on an occurrence." }),
});
export type MeetingUpdateBody = z.output<typeof MeetingUpdateBody>;

/** The longest page of meetings a list returns. */
export const MAX_MEETINGS_PAGE = 100;

/** An ISO 8601 date or datetime on a supported date; which of the two, and the zone, the meetings service reads, as it knows the caller. */
export const DateOrDateTimeInput = DateText.max(64).regex(
  /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$/,
  "must be an ISO 8601 date (YYYY-MM-DD) or datetime",
);

/** Query values arrive as strings; a repeated parameter (an array) is refused. */
export const MeetingListQuery = z.strictObject({
  filter: MeetingFilter.optional().meta({ description: "`upcoming` (default): confirmed, not ended, soonest first; `past`: confirmed and ended, latest first; `draft`: drafts, soonest first; `all`: every meeting, cancelled included, latest first.", default: "upcoming" }),
  limit: Text.regex(/^\d{1,3}$/, `must be an integer between 1 and ${MAX_MEETINGS_PAGE}`)
    .transform(Number)
    .refine((n) => n >= 1 && n <= MAX_MEETINGS_PAGE, `must be an integer between 1 and ${MAX_MEETINGS_PAGE}`)
    .optional()
    .meta({ type: "integer", minimum: 1, maximum: MAX_MEETINGS_PAGE, default: 20, description: "Most meetings in the page. A page may hold fewer, at least one, with `hasMore` true, where more would not fit one message on the bus; continue with `startingAfter`." }),
  from: DateOrDateTimeInput.optional().meta({ description: "Only meetings that end after this: an ISO 8601 date (that day's start in the user's zone) or datetime (without an offset, in the user's zone). Works with every filter and `startingAfter`.", example: "2026-05-04" }),
  to: DateOrDateTimeInput.optional().meta({ description: "Only meetings that start before this: an ISO 8601 date (that whole day included) or datetime; after `from`. Works with every filter and `startingAfter`.", example: "2026-05-10" }),
  /** Id of the last meeting of the previous page. */
  startingAfter: Text.max(64).optional().meta({ description: "Continues the list after this meeting id (the last one of the previous page), in the same filter and order.", example: "mtg_4kQ9sVnB2xR7tLmP0aZcY8dE" }),
});
export type MeetingListQuery = z.output<typeof MeetingListQuery>;

/** An instant as iCalendar's UTC DATE-TIME, `YYYYMMDDTHHMMSSZ` (whole seconds). */
export function icsUtc(instant: Date): string {
  return formatTimestamp(instant).replace(/[-:]/g, "");
}

/**
 * An occurrence's id (api-decisions part 15): its series' id and its
 * original start. The id GET, PATCH and DELETE take, and the one
 * `meetings.v1.responses.record` takes to answer that occurrence only.
 */
export function occurrenceIdOf(seriesId: string, originalStart: Date): string {
  return `${seriesId}_${icsUtc(originalStart)}`;
}

export const MeetingIdParams = z.strictObject({ id: Text.meta({ description: "The meeting id (`mtg_…`), a series' id, or an occurrence's id (`<series id>_<original start as YYYYMMDDTHHMMSSZ>`).", example: "mtg_4kQ9sVnB2xR7tLmP0aZcY8dE" }) });

export const MeetingDeleteQuery = z.strictObject({
  sendInvites: z
    .enum(["true", "false"], { message: "must be true or false" })
    .transform((v) => v === "true")
    .optional()
    .meta({ type: "boolean", default: true, description: "Whether participants of a confirmed meeting that has not ended get a cancellation (default true)." }),
});

// ---- public routes ---------------------------------------------------------

export const meetingsList = routeEndpoint(
  "meetings.v1.http.list",
  httpRequest({ params: Empty, query: MeetingListQuery, body: NoBody }),
  { 200: MeetingList },
);
export const meetingsCreate = routeEndpoint(
  "meetings.v1.http.create",
  httpRequest({ params: Empty, query: Empty, body: MeetingCreateBody }),
  { 201: Meeting },
);
export const meetingsGet = routeEndpoint(
  "meetings.v1.http.get",
  httpRequest({ params: MeetingIdParams, query: Empty, body: NoBody }),
  { 200: Meeting },
);
export const meetingsUpdate = routeEndpoint(
  "meetings.v1.http.update",
  httpRequest({ params: MeetingIdParams, query: Empty, body: MeetingUpdateBody }),
  { 200: Meeting },
);

export const meetingsDelete = routeEndpoint(
  "meetings.v1.http.delete",
  httpRequest({ params: MeetingIdParams, query: MeetingDeleteQuery, body: NoBody }),
  { 204: null },
);

export const meetingsRoutes: RouteDef[] = [
  route({ method: "GET", path: "/v1/meetings", endpoint: meetingsList, operationId: "meetingsList", auth: "api-key", scope: "meetings:read", bucket: "standard", hasBody: false, summary: "List the meetings of the user's calendar", responses: { 200: "One page of the calendar, in the filter's order" } }),
  route({ method: "POST", path: "/v1/meetings", endpoint: meetingsCreate, operationId: "meetingsCreate", auth: "api-key", scope: "meetings:write", bucket: "standard", hasBody: true, idempotent: true, summary: "Create a meeting and optionally send invites", responses: { 201: "The meeting created (or, for a repeated Idempotency-Key, the first answer again)" } }),
  route({ method: "GET", path: "/v1/meetings/:id", endpoint: meetingsGet, operationId: "meetingsGet", auth: "api-key", scope: "meetings:read", bucket: "standard", hasBody: false, summary: "Retrieve one meeting", responses: { 200: "The meeting" } }),
  route({ method: "PATCH", path: "/v1/meetings/:id", endpoint: meetingsUpdate, operationId: "meetingsUpdate", auth: "api-key", scope: "meetings:write", bucket: "standard", hasBody: true, summary: "Update a meeting (organizer only)", responses: { 200: "The whole meeting after the change" }, errors: ["forbidden", "meeting_ended", "meeting_cancelled"] }),
  route({ method: "DELETE", path: "/v1/meetings/:id", endpoint: meetingsDelete, operationId: "meetingsDelete", auth: "api-key", scope: "meetings:write", bucket: "standard", hasBody: false, summary: "Remove a meeting (organizer only), ended or not", responses: { 204: "Removed: it answers 404 from now on and leaves every list and busy time; participants of a confirmed meeting that had not ended get a cancellation" }, errors: ["forbidden"] }),
];

// ---- internal endpoints ----------------------------------------------------

export const BusyUser = z.object({ userId: z.string(), email: Email });

/** A recommendation counts the caller and up to 100 participants: one busy request covers them all. */
export const MAX_BUSY_USERS = 101;

/**
 * A busy interval as `[start, end)` in whole epoch seconds. Pairs of numbers
 * keep a reply of tens of thousands of intervals well inside NATS's 1 MB
 * message limit (at most 24 bytes each; an object of two timestamps takes 62).
 */
export const BusyInterval = z.tuple([z.number().int(), z.number().int()]);
export type BusyInterval = z.infer<typeof BusyInterval>;

/**
 * Busy time of up to 101 users over [from, to): the confirmed meetings each
 * organizes or attends (by account e-mail) that overlap the range, merged per
 * user where they overlap or touch, in start order. Intervals are not cut at
 * the range's edges. Every requested user appears in the reply, possibly with none.
 */
export const meetingsBusy = endpoint(
  "meetings.v1.busy",
  z
    .object({ mode: Mode, users: z.array(BusyUser).max(MAX_BUSY_USERS), from: Timestamp, to: Timestamp })
    .refine((r) => r.from < r.to, { message: "from must be before to", path: ["to"] }),
  z.object({ busy: z.array(z.object({ userId: z.string(), intervals: z.array(BusyInterval) })) }),
);

// ---- events ------------------------------------------------------------------

export const MEETINGS_STREAM: StreamDef = { name: "MEETINGS", subjectPrefix: "meetings.v1.events" };

/** Fields whose change an update event reports (`recurrence`: a series' rule). */
export const MEETING_FIELDS = ["title", "description", "startTime", "duration", "participants", "status", "recurrence"] as const;
export const MeetingField = z.enum(MEETING_FIELDS);
export type MeetingField = z.infer<typeof MeetingField>;

/**
 * One occurrence of a series changed on its own (an exception that is not
 * cancelled): what it has instead of the series' values, named by its
 * original start (iCalendar's RECURRENCE-ID).
 */
export const ChangedOccurrence = z.object({
  originalStartTime: Timestamp,
  title: z.string(),
  description: z.string(),
  startTime: Timestamp,
  duration: Duration,
  participants: z.array(z.string()),
  sequence: z.number().int().positive(),
});
export type ChangedOccurrence = z.infer<typeof ChangedOccurrence>;

/**
 * Changes that ask every participant again: an answer given before one was
 * to another time. Meetings drops the answers kept; invites refuses replies
 * to the versions before it (their SEQUENCE lower than its).
 */
export const ANSWER_RESETTING_FIELDS: readonly MeetingField[] = ["startTime", "duration"];

/**
 * What a consumer needs to write a series as one recurring event: the rule
 * (RRULE), the zone it is expanded in (DTSTART's TZID), the original starts
 * of cancelled occurrences (EXDATE), in UTC, in order, and the occurrences
 * changed on their own that have not ended (each a VEVENT with RECURRENCE-ID
 * beside the series', RFC 5546 3.2.2), in original-start order. Events
 * stored before the last two existed carry neither.
 */
export const SeriesOfEvent = z.object({
  rule: z.string(),
  timeZone: z.string(),
  cancelledStarts: z.array(Timestamp),
  changedOccurrences: z.array(ChangedOccurrence).optional(),
  /**
   * The changed occurrences this change of the series removed (a new time
   * or rule drops those not yet ended): their own participants lose them.
   */
  droppedOccurrences: z.array(ChangedOccurrence).optional(),
});
export type SeriesOfEvent = z.infer<typeof SeriesOfEvent>;

const MeetingEventBase = {
  eventId: z.string(),
  /** The series' id for a series, the occurrence's id for an exception. */
  meetingId: z.string(),
  mode: Mode,
  organizer: z.object({ userId: z.string(), email: z.string() }),
  /**
   * The meeting as it is after the change; events stored before responses
   * existed carry no attendees, before recurrence no series fields. An
   * exception (one occurrence changed or cancelled) is an event whose meeting
   * is the occurrence: `id` the occurrence id, `seriesId` and `originalStartTime` set.
   */
  meeting: Meeting.extend({
    attendees: Meeting.shape.attendees.default([]),
    recurrence: Meeting.shape.recurrence.default(null),
    seriesId: Meeting.shape.seriesId.default(null),
    originalStartTime: Meeting.shape.originalStartTime.default(null),
  }),
  /**
   * Present on every event about a series or one of its occurrences: the
   * series as it is after the change. Absent for single meetings.
   */
  series: SeriesOfEvent.optional(),
  /**
   * Per meeting, 1 at creation and one more on every change: later wins (as
   * iCalendar SEQUENCE). A series and its exceptions share one counter: an
   * exception's sequence is greater than the series' at the time, and a later
   * change of the series is greater again.
   */
  sequence: z.number().int().positive(),
  /**
   * Whether participants should hear about this change: the request's
   * `sendInvites` combined with the rules of api-decisions part 5 (drafts
   * send nothing, only some changes send updates).
   */
  sendInvites: z.boolean(),
  occurredAt: Timestamp,
};

export const meetingCreated = eventDef(MEETINGS_STREAM, "meeting.created", z.object(MeetingEventBase));
export const meetingUpdated = eventDef(
  MEETINGS_STREAM,
  "meeting.updated",
  z.object({
    ...MeetingEventBase,
    changedFields: z.array(MeetingField).min(1),
    previousStatus: MeetingStatus,
    /** Participants before the change: those missing now get a cancellation. */
    previousParticipants: z.array(z.string()),
  }),
);
/** Cancelled by PATCH status (for a series: the whole series; for an occurrence id: that occurrence, an exception). */
export const meetingCancelled = eventDef(
  MEETINGS_STREAM,
  "meeting.cancelled",
  z.object({
    ...MeetingEventBase,
    changedFields: z.array(MeetingField).min(1),
    previousStatus: MeetingStatus,
    previousParticipants: z.array(z.string()),
  }),
);

/**
 * A meeting removed by its organizer (for a series: the whole series). `meeting` is its last state marked
 * `cancelled`, so a consumer that keeps meetings stops counting it, and
 * `sendInvites` says whether participants get a cancellation.
 */
export const meetingDeleted = eventDef(
  MEETINGS_STREAM,
  "meeting.deleted",
  z.object({
    ...MeetingEventBase,
    previousStatus: MeetingStatus,
    previousParticipants: z.array(z.string()),
  }),
);

/** Every change of a meeting, for consumers that follow meetings and the outbox relay. */
export const meetingEvents = [meetingCreated, meetingUpdated, meetingCancelled, meetingDeleted] as const;

/**
 * A participant answered (or answered differently). It changes no meeting
 * field and no sequence: nobody is sent anything because of it.
 */
export const meetingResponseUpdated = eventDef(
  MEETINGS_STREAM,
  "meeting.response_updated",
  z.object({
    eventId: z.string().describe("A unique id of this event (`evt_…`)."),
    meetingId: z.string().describe("The meeting answered: a single meeting's, a series' or one occurrence's id."),
    mode: Mode,
    organizer: z.object({ userId: z.string().describe("The organizer's user id."), email: z.string().describe("The organizer's address.") }).describe("Who organizes the meeting."),
    meeting: MeetingEventBase.meeting,
    attendee: Attendee.describe("The participant's answer as it is now."),
    previousResponse: AttendeeResponse.describe("The participant's answer before this one."),
    source: ResponseSource,
    occurredAt: Timestamp.describe("When the answer was recorded."),
  }),
);

/** Every event the meetings service writes to its stream. */
export const meetingStreamEvents = [...meetingEvents, meetingResponseUpdated] as const;

/**
 * Records a participant's answer to a meeting. The caller has already
 * proven who answered (e-mail: the reply address's token; a provider: the
 * organizer's own calendar); meetings checks the rest: the meeting exists in
 * this mode and is not cancelled, the address is one of its participants,
 * the organizer is the one named, and the answer is newer than the one kept.
 */
export const meetingsRecordResponse = endpoint(
  "meetings.v1.responses.record",
  z.object({
    mode: Mode,
    meetingId: z
      .string()
      .describe("The meeting answered: a single meeting's id, a series' id (every occurrence without an answer of its own), or one occurrence's id (`<series id>_<original start as YYYYMMDDTHHMMSSZ>`, that occurrence only)."),
    organizerEmail: z.string().describe("The organizer the answer names; another than the meeting's means a forged answer."),
    email: z.string().describe("The participant who answered."),
    response: GivenResponse,
    respondedAt: Timestamp.describe("When they answered; an answer older than the one kept changes nothing."),
    source: ResponseSource,
  }),
  z.object({
    outcome: z
      .enum(["applied", "unchanged", "stale", "unknown_meeting", "cancelled", "not_attendee", "wrong_organizer"])
      .describe("`applied`; `unchanged`: the same answer again; `stale`: older than the kept one; the others: refused, nothing written."),
  }),
);
