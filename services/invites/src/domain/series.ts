import type { Meeting, SeriesOfEvent } from "@sched/proto";
import { icalDateTime } from "./seriesZone.js";

/** The meeting whose calendar object (one iCalendar UID, one provider event) carries this one: the series for an occurrence. */
export function calendarMeetingId(meeting: Pick<Meeting, "id" | "seriesId">): string {
  return meeting.seriesId ?? meeting.id;
}

/** An occurrence of a series, changed or cancelled on its own (an exception): named by its original start. */
export function occurrenceStart(meeting: Pick<Meeting, "seriesId" | "originalStartTime">): string | undefined {
  return meeting.seriesId && meeting.originalStartTime ? meeting.originalStartTime : undefined;
}

/**
 * A series' RRULE and, when occurrences were cancelled, their EXDATE, as
 * iCalendar lines (RFC 5545 3.8.5): the EXDATE in the form of DTSTART, local
 * times in `zone` with its TZID, or UTC when no zone is given.
 */
export function recurrenceLines(series: Pick<SeriesOfEvent, "rule" | "cancelledStarts">, zone: string | undefined): string[] {
  const lines = [`RRULE:${series.rule.replace(/^RRULE:/i, "")}`];
  if (series.cancelledStarts.length > 0) lines.push(`EXDATE${zone ? `;TZID=${zone}` : ""}:${series.cancelledStarts.map((s) => icalDateTime(s, zone)).join(",")}`);
  return lines;
}
