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

const lists = (o: Pick<ChangedOccurrence, "participants">, email: string) => o.participants.some((p) => p.toLowerCase() === email.toLowerCase());

/**
 * What a REQUEST of the whole series tells one recipient about its changed
 * occurrences not yet ended (RFC 5546 lets an organizer send an attendee
 * only the instances they are invited to). A participant of the series gets
 * as overrides the changed occurrences that list them, and those that leave
 * them out as EXDATE (they were told of that when it happened; taking the
 * series again must not bring it back). Someone on some occurrences alone
 * gets those, and no series: `cancelled`, the occurrences of theirs this
 * change dropped (a new time re-keys a kept one: its old RECURRENCE-ID goes).
 */
export function occurrencesFor(
  seriesMeeting: Pick<Meeting, "participants">,
  series: Pick<SeriesOfEvent, "changedOccurrences" | "droppedOccurrences">,
  recipient: string,
  nowMs: number,
): { ofSeries: boolean; overrides: ChangedOccurrence[]; excluded: ChangedOccurrence[]; cancelled: ChangedOccurrence[] } {
  const inForce = changedOccurrencesInForce(series, nowMs);
  if (lists(seriesMeeting, recipient)) return { ofSeries: true, overrides: inForce.filter((o) => lists(o, recipient)), excluded: inForce.filter((o) => !lists(o, recipient)), cancelled: [] };
  return { ofSeries: false, overrides: inForce.filter((o) => lists(o, recipient)), excluded: [], cancelled: (series.droppedOccurrences ?? []).filter((o) => lists(o, recipient)) };
}

/**
 * Someone on some occurrences alone who, by this change of the series (not
 * cancelling it), lost one and still has another changed occurrence: a new
 * time that keeps their occurrence gives it a new RECURRENCE-ID. They get a
 * REQUEST carrying their occurrences at their new RECURRENCE-ID and the old
 * ones as cancelled, rather than a CANCEL alone.
 */
export function keepsAnOccurrence(seriesMeeting: Pick<Meeting, "participants" | "status">, series: Pick<SeriesOfEvent, "changedOccurrences" | "droppedOccurrences"> | null | undefined, email: string, nowMs: number): boolean {
  if (!series || seriesMeeting.status === "cancelled" || lists(seriesMeeting, email)) return false;
  return changedOccurrencesInForce(series, nowMs).some((o) => lists(o, email));
}
