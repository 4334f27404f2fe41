import { DateTime } from "luxon";
import { tzlib_get_ical_block } from "timezones-ical-library";

/**
 * The VTIMEZONE (RFC 5545 3.6.5) of an IANA zone, from the time zone rules
 * the library ships; undefined for a zone it does not know.
 */
export function vtimezoneOf(zone: string): string | undefined {
  const block = tzlib_get_ical_block(zone);
  const text = Array.isArray(block) ? block[0] : undefined;
  // The library names UTC `Etc/UTC`: a TZID must name the zone the times are written in.
  return text && text.includes(`\r\nTZID:${zone}\r\n`) ? text : undefined;
}

/**
 * The zone a series' times are written in (DTSTART;TZID=…), so that clients
 * expand its rule in the organizer's zone: 09:00 Berlin stays 09:00 Berlin
 * across a daylight-saving change. Undefined (times in UTC) for UTC, which
 * needs no VTIMEZONE, and for a zone without one, whose local times no
 * client could place.
 */
export function writtenZone(timeZone: string | undefined): string | undefined {
  if (!timeZone || timeZone === "UTC" || timeZone === "Etc/UTC") return undefined;
  return vtimezoneOf(timeZone) ? timeZone : undefined;
}

/** An instant as a DateTime in `zone` (ical-generator writes a luxon DateTime in its own zone, not the process's). */
export function inZone(instant: string | number, zone: string): DateTime {
  const at = typeof instant === "number" ? DateTime.fromMillis(instant, { zone }) : DateTime.fromISO(instant, { zone });
  return at;
}

/** An instant as iCalendar's local DATE-TIME in `zone` (`20261208T090000`), or in UTC with `Z` when no zone. */
export function icalDateTime(instant: string, zone: string | undefined): string {
  return zone ? inZone(instant, zone).toFormat("yyyyMMdd'T'HHmmss") : DateTime.fromISO(instant, { zone: "UTC" }).toFormat("yyyyMMdd'T'HHmmss'Z'");
}
