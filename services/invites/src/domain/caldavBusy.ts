import type { BusyInterval } from "@sched/proto";
import ICAL from "ical.js";

/**
 * The most occurrences of one series walked through, from its first, before
 * giving up on it: ten years of a daily series, and a bound on a
 * minutely one that never ends.
 */
const MAX_OCCURRENCES = 3_660;

const epochSeconds = (time: ICAL.Time) => time.toUnixTime();

/** Whether a VEVENT (a series, or one changed occurrence of it) holds the time: neither cancelled nor transparent. */
function holdsTime(vevent: ICAL.Component): boolean {
  const status = String(vevent.getFirstPropertyValue("status") ?? "").toUpperCase();
  const transparency = String(vevent.getFirstPropertyValue("transp") ?? "").toUpperCase();
  return status !== "CANCELLED" && transparency !== "TRANSPARENT";
}

/**
 * The busy intervals (epoch seconds) one calendar object holds that overlap
 * [from, to). A recurring event counts each occurrence there, as ical.js
 * expands it (RRULE, RDATE, EXDATE) on the clock of its TZID, read from the
 * object's VTIMEZONE, so a weekly 09:00 Berlin event stays 09:00 Berlin
 * across a daylight-saving change; an occurrence changed by a VEVENT with
 * its RECURRENCE-ID counts at its new time, or not at all when cancelled or
 * transparent. Anything that is not iCalendar holds nothing.
 */
export function busyOfIcs(ics: string, from: string, to: string): BusyInterval[] {
  let calendar: ICAL.Component;
  try {
    calendar = new ICAL.Component(ICAL.parse(ics));
  } catch {
    return [];
  }
  const window = { start: Math.floor(Date.parse(from) / 1_000), end: Math.ceil(Date.parse(to) / 1_000) };
  const vevents = calendar.getAllSubcomponents("vevent");
  const series = vevents.filter((v) => !v.hasProperty("recurrence-id"));
  const changed = vevents.filter((v) => v.hasProperty("recurrence-id"));
  const intervals: BusyInterval[] = [];
  const add = (item: ICAL.Component, start: ICAL.Time, end: ICAL.Time) => {
    const interval: BusyInterval = [epochSeconds(start), epochSeconds(end)];
    if (holdsTime(item) && interval[1] > interval[0] && interval[1] > window.start && interval[0] < window.end) intervals.push(interval);
  };

  for (const vevent of series) {
    const uid = vevent.getFirstPropertyValue("uid");
    const event = new ICAL.Event(vevent, { exceptions: changed.filter((c) => c.getFirstPropertyValue("uid") === uid) });
    if (!event.startDate) continue;
    if (!event.isRecurring()) {
      add(vevent, event.startDate, event.endDate);
      continue;
    }
    if (!holdsTime(vevent)) continue;
    const expansion = event.iterator();
    for (let n = 0, next = expansion.next(); next && n < MAX_OCCURRENCES; n += 1, next = expansion.next()) {
      // A changed occurrence may have moved into the window from after it: those are counted below.
      if (epochSeconds(next) >= window.end) break;
      const details = event.getOccurrenceDetails(next);
      add(details.item.component, details.startDate, details.endDate);
    }
  }

  // Changed occurrences whose original time lies past the window (not reached
  // above), or whose series is not in this object, count on their own.
  for (const vevent of changed) {
    const event = new ICAL.Event(vevent);
    const uid = vevent.getFirstPropertyValue("uid");
    const ownSeries = series.some((s) => s.getFirstPropertyValue("uid") === uid);
    if (ownSeries && epochSeconds(event.recurrenceId) < window.end) continue;
    if (event.startDate && event.endDate) add(vevent, event.startDate, event.endDate);
  }
  return intervals;
}
