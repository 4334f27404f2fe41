import type { GivenResponse } from "@sched/proto";
import ICAL from "ical.js";

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
  // An answer for one occurrence of a series is not the answer to the series: it would mark every occurrence.
  if (events[0]!.hasProperty("recurrence-id")) return { ok: false, problem: "an answer for one occurrence (RECURRENCE-ID), not for the meeting" };
  return readEvent(events[0]!);
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
