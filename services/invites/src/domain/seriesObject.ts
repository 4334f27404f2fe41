import ICAL from "ical.js";
import type { SeriesOfEvent } from "@sched/proto";
import { recurrenceLines } from "./series.js";
import { icalDateTime, writtenZone } from "./seriesZone.js";

/** One change of a series, as the organizer's calendar object of the series takes it. */
export type SeriesObjectChange =
  /**
   * The series itself: its master event (rule, cancelled occurrences) replaces the stored one. `occurrences`: its
   * changed occurrences not yet ended, each added where the object lacks it (a new time re-keys a kept one).
   */
  | { kind: "series"; ics: string; occurrences?: ReadonlyArray<{ originalStart: string; ics: string }> }
  /** One occurrence changed on its own: its event (RECURRENCE-ID) replaces the stored one of that occurrence, if any. */
  | { kind: "occurrence"; ics: string; originalStart: string }
  /** One occurrence cancelled: it joins the master's EXDATE, and a stored changed copy of it goes. */
  | { kind: "occurrence-cancelled"; originalStart: string; sequence: number };

/**
 * The calendar object resource of a series after a change (RFC 4791 4.1:
 * every component of one UID in one resource, the master with its rule and
 * each changed occurrence as its own VEVENT with RECURRENCE-ID). What the
 * server holds now is the starting point, so the occurrences changed before
 * stay, and the answers it wrote back into them. Occurrences are matched by
 * their RECURRENCE-ID as written in the series' zone.
 */
export function seriesObject(stored: string | undefined, series: SeriesOfEvent, change: SeriesObjectChange): string {
  if (stored === undefined) {
    if (change.kind === "occurrence-cancelled") throw new Error("no calendar object to cancel an occurrence in");
    if (change.kind === "series" && change.occurrences?.length) return seriesObject(change.ics, series, change);
    return change.ics;
  }
  const zone = writtenZone(series.timeZone);
  const calendar = new ICAL.Component(ICAL.parse(stored));
  const events = calendar.getAllSubcomponents("vevent");
  const master = events.find((e) => !e.hasProperty("recurrence-id"));
  const recurrenceIdOf = (e: ICAL.Component) => (e.getFirstPropertyValue("recurrence-id") as ICAL.Time | null)?.toICALString();
  const dropOccurrences = (starts: readonly string[]) => {
    const named = new Set(starts.map((s) => icalDateTime(s, zone)));
    for (const e of events) if (e !== master && named.has(recurrenceIdOf(e) ?? "")) calendar.removeSubcomponent(e);
  };

  if (change.kind === "occurrence-cancelled") {
    dropOccurrences([change.originalStart]);
    if (master) {
      master.removeAllProperties("exdate");
      for (const line of recurrenceLines(series, zone).slice(1)) master.addProperty(ICAL.Property.fromString(line));
      master.updatePropertyWithValue("sequence", change.sequence);
    }
    return calendar.toString();
  }

  const fresh = new ICAL.Component(ICAL.parse(change.ics));
  const [freshEvent] = fresh.getAllSubcomponents("vevent");
  if (!freshEvent) throw new Error("the changed event has no VEVENT");
  if (change.kind === "series") {
    if (master) calendar.removeSubcomponent(master);
    dropOccurrences(series.cancelledStarts);
    // A series moved to other times has other occurrences: a changed copy of one it no longer has would show as an extra event.
    const current = occurrencesOf(freshEvent, fresh);
    for (const e of calendar.getAllSubcomponents("vevent")) if (!current.has(recurrenceIdOf(e) ?? "")) calendar.removeSubcomponent(e);
  } else {
    dropOccurrences([change.originalStart]);
  }
  // The zone of the fresh event, once: a series moved to another zone brings its own.
  for (const vtimezone of fresh.getAllSubcomponents("vtimezone")) {
    const tzid = vtimezone.getFirstPropertyValue("tzid");
    if (!calendar.getAllSubcomponents("vtimezone").some((v) => v.getFirstPropertyValue("tzid") === tzid)) calendar.addSubcomponent(vtimezone);
  }
  calendar.addSubcomponent(freshEvent);
  if (change.kind === "series") {
    // A changed occurrence the object does not hold (kept by a new time under a new RECURRENCE-ID) joins it; those it
    // holds stay as they are, with the answers the server wrote into them.
    const held = new Set(calendar.getAllSubcomponents("vevent").map((e) => recurrenceIdOf(e) ?? ""));
    for (const occurrence of change.occurrences ?? []) {
      if (held.has(icalDateTime(occurrence.originalStart, zone))) continue;
      const [event] = new ICAL.Component(ICAL.parse(occurrence.ics)).getAllSubcomponents("vevent");
      if (event) calendar.addSubcomponent(event);
    }
  }
  return calendar.toString();
}

/** The most occurrences a series has (api-decisions 15): the expansion below stops there. */
const MAX_OCCURRENCES = 730;

/** The original starts of a series' occurrences, as RECURRENCE-ID spells them in the series' zone. */
function occurrencesOf(master: ICAL.Component, calendar: ICAL.Component): Set<string> {
  const zones = calendar.getAllSubcomponents("vtimezone").map((v) => new ICAL.Timezone(v));
  // A copy: the expansion sets the start's zone, and the master is written out as it came.
  const event = new ICAL.Event(new ICAL.Component(structuredClone(master.toJSON())));
  // Expanded in the master's own zone form: local times of its TZID compare as RECURRENCE-ID writes them.
  const tzid = event.component.getFirstProperty("dtstart")?.getParameter("tzid");
  const zone = zones.find((z) => z.tzid === tzid);
  if (zone) event.startDate.zone = zone;
  const starts = new Set<string>();
  const iterator = event.iterator();
  for (let next = iterator.next(); next && starts.size < MAX_OCCURRENCES; next = iterator.next()) starts.add(next.toICALString());
  return starts;
}
