import type { Event, ResponseType, ScheduleInformation } from "@microsoft/microsoft-graph-types";
import { formatTimestamp, type BusyInterval, type GivenResponse, type Meeting, type SeriesOfEvent } from "@sched/proto";
import { createHash } from "node:crypto";
import { graphRecurrenceOf, type GraphPatternedRecurrence } from "./graphRecurrence.js";
import { meetingEndMs } from "./meetingTimes.js";
import { inZone } from "./seriesZone.js";

/**
 * Graph's idempotency key of the event of a meeting: the same on every
 * try, so a create whose answer was lost returns the event it made rather
 * than a second one. Hashed with a product prefix so it names nothing
 * outside this service and stays short.
 */
export function graphTransactionId(meetingId: string): string {
  return `sched-${createHash("sha256").update(meetingId).digest("hex").slice(0, 40)}`;
}

/** An instant as Graph's dateTimeTimeZone spells it: local time without offset, the zone beside it. */
export function graphDateTime(epochMs: number): { dateTime: string; timeZone: string } {
  return { dateTime: new Date(epochMs).toISOString().replace(/\.\d{3}Z$/, ""), timeZone: "UTC" };
}

/**
 * An instant as the local time of `zone` (an IANA name, which Graph takes
 * beside its Windows names): a series' times are written in its zone, since
 * Graph expands the pattern at the start's local time, so 09:00 Berlin stays
 * 09:00 Berlin across a daylight-saving change.
 */
function graphZonedDateTime(epochMs: number, zone: string): { dateTime: string; timeZone: string } {
  return { dateTime: inZone(epochMs, zone).toFormat("yyyy-MM-dd'T'HH:mm:ss"), timeZone: zone };
}

/** Reads a dateTimeTimeZone that Graph answered in UTC (the `outlook.timezone` preference) as epoch ms. */
export function epochMsOfGraphDateTime(value: { dateTime?: string | null } | null | undefined): number | undefined {
  if (!value?.dateTime) return undefined;
  const ms = Date.parse(/(?:Z|[+-]\d{2}:\d{2})$/.test(value.dateTime) ? value.dateTime : `${value.dateTime}Z`);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * The event in the organizer's calendar: the meeting, its participants as
 * required attendees (the organizer is the event's owner, not an attendee).
 * Graph mails the invitations, updates and cancellations itself.
 */
export function graphEventBody(meeting: Meeting, organizerEmail: string): Event {
  return {
    subject: meeting.title,
    body: { contentType: "text", content: meeting.description },
    start: graphDateTime(Date.parse(meeting.startTime)),
    end: graphDateTime(meetingEndMs(meeting)),
    attendees: meeting.participants.filter((p) => p !== organizerEmail).map((address) => ({ emailAddress: { address }, type: "required" })),
    isReminderOn: true,
    responseRequested: true,
  };
}

/**
 * The recurring event of a series: the body of its first occurrence, its
 * times in the series' zone, and the rule as Graph's patternedRecurrence.
 * Refused (with the reason) when Graph cannot say the rule.
 */
export function graphSeriesBody(meeting: Meeting, series: SeriesOfEvent, organizerEmail: string): { ok: true; body: Event } | { ok: false; reason: string } {
  const recurrence = graphRecurrenceOf(series.rule, meeting.startTime, series.timeZone);
  if (!recurrence.ok) return recurrence;
  const zone = series.timeZone === "Etc/UTC" ? "UTC" : series.timeZone;
  return {
    ok: true,
    body: {
      ...graphEventBody(meeting, organizerEmail),
      start: graphZonedDateTime(Date.parse(meeting.startTime), zone),
      end: graphZonedDateTime(meetingEndMs(meeting), zone),
      // Graph's own types spell the enums as unions of the same names.
      recurrence: recurrence.recurrence as GraphPatternedRecurrence & Event["recurrence"],
    },
  };
}

/**
 * The window to ask `instances` for an occurrence in: Graph has no lookup by
 * original start, so the window spans the original start and the time the
 * occurrence has now (a day either side), and the answer is matched on
 * `originalStart`. An occurrence moved earlier to a time outside it is not found.
 */
export function instanceWindow(originalStart: string, meeting: Meeting): { startDateTime: string; endDateTime: string } {
  const DAY_MS = 86_400_000;
  const times = [Date.parse(originalStart), Date.parse(meeting.startTime), meetingEndMs(meeting)];
  return { startDateTime: formatTimestamp(Math.min(...times) - DAY_MS), endDateTime: formatTimestamp(Math.max(...times) + DAY_MS) };
}

/**
 * Whether an instance (read in UTC) already shows what `body` would write:
 * the same times, subject and attendees. Graph's body text is not compared:
 * Exchange rewrites it as HTML.
 */
export function instanceShows(instance: Pick<Event, "subject" | "start" | "end" | "attendees">, body: Pick<Event, "subject" | "start" | "end" | "attendees">): boolean {
  const addresses = (e: Pick<Event, "attendees">) => (e.attendees ?? []).map((a) => a.emailAddress?.address?.toLowerCase() ?? "").sort().join(",");
  return (
    instance.subject === body.subject &&
    epochMsOfGraphDateTime(instance.start) === epochMsOfGraphDateTime(body.start) &&
    epochMsOfGraphDateTime(instance.end) === epochMsOfGraphDateTime(body.end) &&
    addresses(instance) === addresses(body)
  );
}

/** Whether Graph's `originalStart` of an instance (UTC, any precision) is this original start. */
export function isInstanceOf(instance: Pick<Event, "originalStart">, originalStart: string): boolean {
  return instance.originalStart != null && Date.parse(instance.originalStart) === Date.parse(originalStart);
}

/** An attendee's answer as the meetings service records it; undefined while they have not answered. */
export function responseOfGraph(response: ResponseType | null | undefined): GivenResponse | undefined {
  switch (response) {
    case "accepted":
      return "accepted";
    case "declined":
      return "declined";
    case "tentativelyAccepted":
      return "tentative";
    default:
      return undefined;
  }
}

/** Graph's "no time" (0001-01-01) means the attendee never answered; a real time is when they did. */
export function graphResponseTime(time: string | null | undefined): string | undefined {
  if (!time || time.startsWith("0001-")) return undefined;
  const ms = Date.parse(/(?:Z|[+-]\d{2}:\d{2})$/.test(time) ? time : `${time}Z`);
  return Number.isNaN(ms) ? undefined : formatTimestamp(ms);
}

/** The statuses of getSchedule items that keep the person from another meeting. */
const BUSY_STATUSES = new Set(["busy", "oof", "tentative"]);

/** Busy intervals (epoch seconds) of one getSchedule answer, in start order. */
export function busyOfSchedule(schedule: ScheduleInformation | undefined): BusyInterval[] {
  return busyOfShown((schedule?.scheduleItems ?? []).map((item) => ({ shownAs: item.status, start: item.start, end: item.end })));
}

/**
 * Busy intervals (epoch seconds) of calendar-view events answered in UTC:
 * those shown as busy, away or tentative (as getSchedule counts them), not
 * cancelled, in start order.
 */
export function busyOfCalendarView(events: readonly Pick<Event, "start" | "end" | "showAs" | "isCancelled">[]): BusyInterval[] {
  return busyOfShown(events.filter((e) => !e.isCancelled).map((e) => ({ shownAs: e.showAs, start: e.start, end: e.end })));
}

type GraphTime = { dateTime?: string | null } | null | undefined;

function busyOfShown(items: readonly { shownAs: string | null | undefined; start: GraphTime; end: GraphTime }[]): BusyInterval[] {
  const intervals: BusyInterval[] = [];
  for (const item of items) {
    if (!item.shownAs || !BUSY_STATUSES.has(item.shownAs)) continue;
    const start = epochMsOfGraphDateTime(item.start);
    const end = epochMsOfGraphDateTime(item.end);
    if (start !== undefined && end !== undefined && end > start) intervals.push([Math.floor(start / 1_000), Math.ceil(end / 1_000)]);
  }
  return intervals.sort((a, b) => a[0] - b[0]);
}
