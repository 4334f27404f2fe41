import type { Caller, ChangedOccurrence, Duration, Meeting, MeetingListItem, MeetingStatus, SeriesOfEvent } from "@sched/proto";
import type { MeetingState } from "./changes.js";
import type { MeetingRecord } from "./meeting.js";
import { attendeesOf, occurrenceAnswers, type Answers } from "./seriesAnswers.js";
import { occurrenceId, occurrenceStartTimes, type SeriesRule } from "./recurrence.js";
import { durationMs, formatTimestamp, LONGEST_MEETING_MS } from "./timing.js";

/**
 * A recurring meeting as the service holds it: the meeting fields every
 * occurrence takes unless changed, and the rule. `responses` are the answers
 * to the whole series; an occurrence's own answers are kept apart (seriesAnswers.ts).
 */
export interface SeriesRecord extends MeetingRecord {
  // startTime is the first occurrence's start (DTSTART); sequence is shared with the
  // exceptions: each change of either takes the next number.
  recurrence: string;
  timeZone: string;
  /** The end of the last occurrence the rule gives. */
  lastEnd: Date;
  /** Occurrences of the rule ending by then are not generated (kept as exceptions); null: all are. */
  activeFrom: Date | null;
}

/** One occurrence stored because it differs from its series: changed, cancelled, or kept as it was. */
export interface ExceptionRecord {
  seriesId: string;
  originalStart: Date;
  title: string;
  description: string;
  startTime: Date;
  duration: Duration;
  participants: string[];
  status: MeetingStatus;
  sequence: number;
}

/** An occurrence as lists, busy time and GET see it. */
export interface Occurrence extends MeetingState {
  id: string;
  seriesId: string;
  originalStart: Date;
  sequence: number;
  /** Whether it is stored as an exception. */
  exception: boolean;
}

/**
 * What a series record was expanded with, kept with the record (records are
 * never changed in place: a change makes a new one): its rule, whose expanded
 * blocks go with it (@sched/time), its occurrences' ids by original start,
 * and the rule's own occurrences (those without an exception) by original
 * start, built once: a list or busy time of the kept series then allocates
 * nothing per occurrence. Occurrences are never changed in place either.
 */
const expandedWith = new WeakMap<SeriesRecord, { rule: SeriesRule; ids: Map<number, string>; plain: Map<number, Occurrence> }>();

function expansionOf(series: SeriesRecord): { rule: SeriesRule; ids: Map<number, string>; plain: Map<number, Occurrence> } {
  let kept = expandedWith.get(series);
  if (!kept) {
    kept = { rule: { rule: series.recurrence, timeZone: series.timeZone, start: series.startTime, lastEnd: series.lastEnd }, ids: new Map(), plain: new Map() };
    expandedWith.set(series, kept);
  }
  return kept;
}

export function ruleOf(series: SeriesRecord): SeriesRule {
  return expansionOf(series).rule;
}

/** The id of the occurrence at an original start, written once per record. */
function occurrenceIdIn(series: SeriesRecord, originalStart: Date): string {
  const { ids } = expansionOf(series);
  const at = originalStart.getTime();
  let id = ids.get(at);
  if (id === undefined) ids.set(at, (id = occurrenceId(series.id, originalStart)));
  return id;
}

/** The occurrence at an original start, from the series or its exception. */
export function occurrenceOf(series: SeriesRecord, originalStart: Date, exception: ExceptionRecord | undefined): Occurrence {
  const id = occurrenceIdIn(series, originalStart);
  if (exception) {
    const { title, description, startTime, duration, participants, sequence } = exception;
    // Cancelling the series cancels its changed occurrences too.
    const status = series.status === "cancelled" ? "cancelled" : exception.status;
    return { id, seriesId: series.id, originalStart, title, description, startTime, duration, participants, status, sequence, exception: true };
  }
  const { title, description, duration, participants, status, sequence } = series;
  return { id, seriesId: series.id, originalStart, title, description, startTime: originalStart, duration, participants, status, sequence, exception: false };
}

/** The rule's own occurrence at an original start (epoch ms), built once per record (expansionOf). */
function plainOccurrence(series: SeriesRecord, at: number): Occurrence {
  const { plain } = expansionOf(series);
  let occurrence = plain.get(at);
  if (occurrence === undefined) plain.set(at, (occurrence = occurrenceOf(series, new Date(at), undefined)));
  return occurrence;
}

/**
 * The occurrences of a series overlapping [from, to), in start order: the
 * rule's, expanded over the window only, each replaced by its exception
 * where it has one, and the exceptions moved into the window from elsewhere.
 * `exceptions` must hold at least the series' exceptions whose original
 * start or actual start lies within LONGEST_MEETING_MS of the window.
 */
export function occurrencesIn(series: SeriesRecord, exceptions: readonly ExceptionRecord[], from: Date, to: Date): Occurrence[] {
  const fromMs = from.getTime();
  const toMs = to.getTime();
  // Most series have no exception near a window: no map to build then.
  const byOriginal = exceptions.length === 0 ? undefined : exceptionsByOriginal(series.id, exceptions);
  const out: Occurrence[] = [];
  const activeFrom = series.activeFrom?.getTime() ?? -Infinity;
  const length = durationMs(series.duration);
  for (const start of occurrenceStartTimes(ruleOf(series), fromMs - LONGEST_MEETING_MS, toMs)) {
    if (byOriginal?.has(start)) continue;
    const end = start + length;
    if (end <= activeFrom) continue;
    if (start < toMs && end > fromMs) out.push(plainOccurrence(series, start));
  }
  if (byOriginal === undefined || byOriginal.size === 0) return out; // the rule's starts come in order, each once
  for (const exception of byOriginal.values()) {
    const occurrence = occurrenceOf(series, exception.originalStart, exception);
    const start = occurrence.startTime.getTime();
    if (start < toMs && start + durationMs(occurrence.duration) > fromMs) out.push(occurrence);
  }
  return out.sort((a, b) => a.startTime.getTime() - b.startTime.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

function exceptionsByOriginal(seriesId: string, exceptions: readonly ExceptionRecord[]): Map<number, ExceptionRecord> {
  const out = new Map<number, ExceptionRecord>();
  for (const e of exceptions) if (e.seriesId === seriesId) out.set(e.originalStart.getTime(), e);
  return out;
}

export function seriesToMeeting(series: SeriesRecord): Meeting {
  return {
    id: series.id,
    title: series.title,
    description: series.description,
    startTime: formatTimestamp(series.startTime),
    duration: series.duration,
    participants: series.participants,
    status: series.status,
    organizer: series.organizerEmail,
    createdAt: formatTimestamp(series.createdAt),
    attendees: attendeesOf(series.participants, series.responses),
    recurrence: series.recurrence,
    seriesId: null,
    originalStartTime: null,
  };
}

/** The occurrence as GET shows it; `own`: its own answers (none: the series' answers stand). */
export function occurrenceToMeeting(series: SeriesRecord, o: Occurrence, own: Answers | undefined): Meeting {
  return {
    ...seriesToMeeting(series),
    id: o.id,
    title: o.title,
    description: o.description,
    startTime: formatTimestamp(o.startTime),
    duration: o.duration,
    participants: o.participants,
    status: o.status,
    attendees: attendeesOf(o.participants, occurrenceAnswers(series.responses, own)),
    recurrence: null,
    seriesId: series.id,
    originalStartTime: formatTimestamp(o.originalStart),
  };
}

/** The occurrence as a list item: the fields of occurrenceToMeeting but description, createdAt and attendees, in the same order. */
export function occurrenceListItem(series: SeriesRecord, o: Occurrence): MeetingListItem {
  return {
    id: o.id,
    title: o.title,
    startTime: formatTimestamp(o.startTime),
    duration: o.duration,
    participants: o.participants,
    status: o.status,
    organizer: series.organizerEmail,
    recurrence: null,
    seriesId: series.id,
    originalStartTime: formatTimestamp(o.originalStart),
  };
}

/** List items of the rule's own occurrences, written once per occurrence (they are kept with their record: expansionOf). */
const listItemTexts = new WeakMap<Occurrence, string>();

/** occurrenceListItem as JSON text. */
export function occurrenceListItemJson(series: SeriesRecord, o: Occurrence): string {
  let text = listItemTexts.get(o);
  if (text === undefined) {
    text = JSON.stringify(occurrenceListItem(series, o));
    // An exception's occurrence is built again for each request: nothing to find it by next time.
    if (!o.exception) listItemTexts.set(o, text);
  }
  return text;
}

/**
 * Whether an occurrence is in a user's calendar: they organize the series,
 * or the occurrence lists them. An exception may add someone the series does
 * not list, or leave out someone it does, for that occurrence alone.
 */
export function seesOccurrence(series: Pick<SeriesRecord, "organizerId">, occurrence: Pick<Occurrence, "participants">, user: { userId: string; email: string }): boolean {
  return series.organizerId === user.userId || occurrence.participants.includes(user.email.toLowerCase());
}

/**
 * Who sees a series: its organizer and its participants (by account e-mail),
 * in its mode, and whoever one of its occurrences lists alone
 * (`onAnOccurrence`: an exception adds them): they see that occurrence,
 * hence the series it belongs to, as a participant who may not change it.
 */
export function seriesAccess(
  series: Pick<SeriesRecord, "mode" | "organizerId" | "participants">,
  caller: Pick<Caller, "userId" | "email" | "mode">,
  onAnOccurrence = false,
): "organizer" | "participant" | "none" {
  if (series.mode !== caller.mode) return "none";
  if (series.organizerId === caller.userId) return "organizer";
  return series.participants.includes(caller.email.toLowerCase()) || onAnOccurrence ? "participant" : "none";
}

/**
 * Who may see one occurrence, as GET, lists and busy time see it: none when
 * the series is of another mode or the occurrence does not list them (unless
 * they organize it). PATCH and DELETE of the occurrence answer 404 for none
 * and 403 for a participant, as for a single meeting.
 */
export function occurrenceAccess(series: Pick<SeriesRecord, "mode" | "organizerId">, occurrence: Pick<Occurrence, "participants">, caller: Pick<Caller, "userId" | "email" | "mode">): "organizer" | "participant" | "none" {
  if (series.mode !== caller.mode) return "none";
  if (series.organizerId === caller.userId) return "organizer";
  return seesOccurrence(series, occurrence, caller) ? "participant" : "none";
}

/**
 * What events about a series carry for calendars: the rule, its zone, the
 * cancelled occurrences (EXDATE), and the changed ones among `exceptions`
 * (the caller passes those not yet ended) and among those the change `dropped`.
 */
export function seriesOfEvent(series: SeriesRecord, exceptions: readonly ExceptionRecord[], dropped: readonly ExceptionRecord[] = []): SeriesOfEvent {
  const own = (list: readonly ExceptionRecord[]) => list.filter((e) => e.seriesId === series.id).sort((a, b) => a.originalStart.getTime() - b.originalStart.getTime());
  const changed = (list: readonly ExceptionRecord[]) => own(list).filter((e) => e.status !== "cancelled").map(changedOccurrence);
  const cancelled = own(exceptions).filter((e) => e.status === "cancelled");
  return {
    rule: series.recurrence,
    timeZone: series.timeZone,
    cancelledStarts: cancelled.map((e) => formatTimestamp(e.originalStart)),
    changedOccurrences: changed(exceptions),
    droppedOccurrences: changed(dropped),
  };
}

function changedOccurrence(e: ExceptionRecord): ChangedOccurrence {
  const { title, description, duration, participants, sequence } = e;
  return { originalStartTime: formatTimestamp(e.originalStart), title, description, startTime: formatTimestamp(e.startTime), duration, participants, sequence };
}
