import type { GivenResponse } from "@sched/proto";
import ICAL from "ical.js";
import { DateTime } from "luxon";

/** What an iTIP REPLY (RFC 5546 §3.2.3) says, as far as answers go. */
export interface ItipReply {
  uid: string;
  /** The ORGANIZER's address, lower-cased. */
  organizer: string;
  /** Each ATTENDEE with its PARTSTAT, addresses lower-cased. */
  attendees: { email: string; partstat: string }[];
  /** DTSTAMP: when the attendee's client made the reply. */
  stamp: Date | undefined;
  /** SEQUENCE: the version of the meeting answered (0 when absent). */
  sequence: number;
  /** RECURRENCE-ID as an instant: the answer is for that occurrence of a series only. Absent: for the whole meeting. */
  recurrenceId?: Date;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

const mailbox = (value: unknown) => String(value ?? "").replace(/^mailto:/i, "").trim().toLowerCase();

/** Reads a METHOD:REPLY calendar; anything else, or text that is no calendar, is a problem named for the log. */
export function parseItipReply(ics: string): Parsed<ItipReply> {
  let calendar: ICAL.Component;
  try {
    calendar = new ICAL.Component(ICAL.parse(ics));
  } catch (err) {
    return { ok: false, problem: `not iCalendar: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (calendar.name !== "vcalendar") return { ok: false, problem: "not a VCALENDAR" };
  const method = String(calendar.getFirstPropertyValue("method") ?? "").toUpperCase();
  if (method !== "REPLY") return { ok: false, problem: `METHOD is ${method || "missing"}, not REPLY` };
  const events = calendar.getAllSubcomponents("vevent");
  if (events.length !== 1) return { ok: false, problem: `${events.length} VEVENTs, not one` };
  const read = readEvent(events[0]!);
  if (!read.ok) return read;
  // An answer for one occurrence of a series (RFC 5546 3.2.3) names it by RECURRENCE-ID: it answers that occurrence only.
  const recurrenceId = readRecurrenceId(calendar, events[0]!);
  if (!recurrenceId.ok) return recurrenceId;
  return recurrenceId.value ? { ok: true, value: { ...read.value, recurrenceId: recurrenceId.value } } : read;
}

/**
 * RECURRENCE-ID as an instant: UTC as written, or a local time in its TZID,
 * read with the VTIMEZONE the message carries (Outlook names zones its own
 * way) or else as an IANA zone. A date without a time, a floating time or a
 * zone nobody can place names no occurrence.
 */
function readRecurrenceId(calendar: ICAL.Component, event: ICAL.Component): Parsed<Date | undefined> {
  const property = event.getFirstProperty("recurrence-id");
  if (!property) return { ok: true, value: undefined };
  const value = property.getFirstValue();
  if (!(value instanceof ICAL.Time) || value.isDate) return { ok: false, problem: "RECURRENCE-ID is not a date-time" };
  const tzid = property.getParameter("tzid");
  if (typeof tzid !== "string") {
    return value.zone === ICAL.Timezone.utcTimezone ? { ok: true, value: value.toJSDate() } : { ok: false, problem: "RECURRENCE-ID in floating time" };
  }
  const vtimezone = calendar.getAllSubcomponents("vtimezone").find((c) => c.getFirstPropertyValue("tzid") === tzid);
  if (vtimezone) {
    const local = value.clone();
    local.zone = new ICAL.Timezone(vtimezone);
    return { ok: true, value: new Date(local.toUnixTime() * 1_000) };
  }
  const local = DateTime.fromObject({ year: value.year, month: value.month, day: value.day, hour: value.hour, minute: value.minute, second: value.second }, { zone: tzid });
  return local.isValid ? { ok: true, value: local.toJSDate() } : { ok: false, problem: `RECURRENCE-ID in a zone of no VTIMEZONE (${tzid})` };
}

/**
 * Reads a stored event (no METHOD) the way a reply is read: its UID,
 * ORGANIZER and each ATTENDEE's PARTSTAT. A series' object holds the series
 * and its changed occurrences (RECURRENCE-ID): the series' own event answers.
 */
export function parseStoredEvent(ics: string): Parsed<ItipReply> {
  try {
    const events = new ICAL.Component(ICAL.parse(ics)).getAllSubcomponents("vevent");
    const masters = events.filter((e) => !e.hasProperty("recurrence-id"));
    if (masters.length !== 1) return { ok: false, problem: `${masters.length} VEVENTs without RECURRENCE-ID, not one` };
    return readEvent(masters[0]!);
  } catch (err) {
    return { ok: false, problem: `not iCalendar: ${err instanceof Error ? err.message : String(err)}` };
  }
}

function readEvent(event: ICAL.Component): Parsed<ItipReply> {
  const uid = String(event.getFirstPropertyValue("uid") ?? "");
  if (!uid) return { ok: false, problem: "no UID" };
  const organizer = mailbox(event.getFirstPropertyValue("organizer"));
  if (!organizer) return { ok: false, problem: "no ORGANIZER" };
  const attendees = event.getAllProperties("attendee").map((p) => ({ email: mailbox(p.getFirstValue()), partstat: String(p.getParameter("partstat") ?? "NEEDS-ACTION").toUpperCase() }));
  const stamp = event.getFirstPropertyValue("dtstamp");
  const sequence = Number(event.getFirstPropertyValue("sequence") ?? 0);
  return { ok: true, value: { uid, organizer, attendees, stamp: stamp instanceof ICAL.Time ? stamp.toJSDate() : undefined, sequence: Number.isInteger(sequence) ? sequence : 0 } };
}

const RESPONSES: Readonly<Record<string, GivenResponse>> = { ACCEPTED: "accepted", DECLINED: "declined", TENTATIVE: "tentative" };

/** The answer a PARTSTAT gives; undefined for those that answer nothing (NEEDS-ACTION, DELEGATED…). */
export function responseOfPartstat(partstat: string): GivenResponse | undefined {
  return RESPONSES[partstat.toUpperCase()];
}
