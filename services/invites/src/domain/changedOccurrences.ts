import { occurrenceIdOf, type ChangedOccurrence, type Meeting, type SeriesOfEvent } from "@sched/proto";
import { meetingEndMs } from "./meetingTimes.js";

/** A changed occurrence of the series `seriesMeeting` as a meeting of its own: the series' fields, with what the occurrence changed. */
export function occurrenceMeeting(seriesMeeting: Meeting, occurrence: ChangedOccurrence): Meeting {
  const { title, description, startTime, duration, participants } = occurrence;
  return {
    ...seriesMeeting,
    id: occurrenceIdOf(seriesMeeting.id, new Date(occurrence.originalStartTime)),
    title,
    description,
    startTime,
    duration,
    participants,
    attendees: participants.map((email) => seriesMeeting.attendees.find((a) => a.email === email) ?? { email, response: "needsAction", respondedAt: null }),
    recurrence: null,
    seriesId: seriesMeeting.id,
    originalStartTime: occurrence.originalStartTime,
  };
}

/**
 * The series' changed occurrences that have not ended at `nowMs`: those a
 * copy of the whole series must carry beside its rule (RFC 5546 3.2.2), or
 * a client that takes the series again would show them at the rule's time.
 */
export function changedOccurrencesInForce(series: Pick<SeriesOfEvent, "changedOccurrences"> | null | undefined, nowMs: number): ChangedOccurrence[] {
  return (series?.changedOccurrences ?? []).filter((o) => meetingEndMs(o) > nowMs);
}

/**
 * The occurrences someone who is not a participant of the series loses by
 * a change of the whole series: those changed on their own with them added
 * (cancelled with the series, or dropped by its new time or rule). Empty
 * for a participant of the series, whom the series' own messages reach.
 */
export function occurrencesLostBy(seriesMeeting: Pick<Meeting, "participants" | "status" | "seriesId">, series: Pick<SeriesOfEvent, "changedOccurrences" | "droppedOccurrences">, email: string): ChangedOccurrence[] {
  const who = email.toLowerCase();
  if (seriesMeeting.seriesId || seriesMeeting.participants.some((p) => p.toLowerCase() === who)) return [];
  const lost = seriesMeeting.status === "cancelled" ? (series.changedOccurrences ?? []) : (series.droppedOccurrences ?? []);
  return lost.filter((o) => o.participants.some((p) => p.toLowerCase() === who));
}

/**
 * Everyone, other than the series' participants and the organizer, who
 * loses an occurrence they were added to by this change of the series
 * (occurrencesLostBy), each once, in address order.
 */
export function occurrenceOnlyLosers(seriesMeeting: Pick<Meeting, "participants" | "status" | "seriesId">, series: Pick<SeriesOfEvent, "changedOccurrences" | "droppedOccurrences"> | null | undefined, organizer: string): string[] {
  if (!series || seriesMeeting.seriesId) return [];
  const candidates = new Set([...(series.changedOccurrences ?? []), ...(series.droppedOccurrences ?? [])].flatMap((o) => o.participants.map((p) => p.toLowerCase())));
  candidates.delete(organizer.toLowerCase());
  return [...candidates].filter((email) => occurrencesLostBy(seriesMeeting, series, email).length > 0).sort();
}
