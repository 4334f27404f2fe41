import { AppError } from "@sched/errors";
import { IANAZone } from "luxon";

export const DEFAULT_TIME_ZONE = "UTC";

/**
 * Offsets spelled as zones ("UTC+2", "GMT-05:00", "+02:00"). Newer ICU builds
 * accept some of them as zones, but they follow no daylight-saving rules, so
 * a user's wall clock would drift twice a year: only named zones are taken.
 */
const FIXED_OFFSET = /^(?:UTC|GMT)?\s*[+-]\s*\d/i;

/** Whether `name` spells an offset rather than naming a zone (`Etc/GMT+2` names one). */
export function isFixedOffset(name: string): boolean {
  return FIXED_OFFSET.test(name);
}

let canonicalNames: Map<string, string> | undefined;

/** Canonical spelling of every zone the runtime knows, by its lower-case name. */
function spellings(): Map<string, string> {
  canonicalNames ??= new Map([...Intl.supportedValuesOf("timeZone"), "UTC"].map((name) => [name.toLowerCase(), name]));
  return canonicalNames;
}

/**
 * The IANA zone `name` stands for, spelled canonically (`europe/berlin` →
 * `Europe/Berlin`), or undefined when it is not an IANA zone name. Links such
 * as `US/Pacific` are kept as given: they are IANA names too.
 */
export function canonicalTimeZone(name: string): string | undefined {
  if (name.trim() !== name || isFixedOffset(name) || !IANAZone.isValidZone(name)) return undefined;
  return spellings().get(name.toLowerCase()) ?? name;
}

/** The canonical zone, or 400 naming `param`. */
export function requireTimeZone(name: string, param = "timezone"): string {
  const zone = canonicalTimeZone(name);
  if (zone === undefined) {
    throw new AppError("invalid_request", `Invalid ${param}: must be an IANA time zone name such as Europe/Berlin.`, { param });
  }
  return zone;
}
