import type { RouteDeprecation } from "@sched/proto";

const MONTHS_OF_NOTICE = 12;

const utcDay = (day: string): Date => {
  const at = new Date(`${day}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || Number.isNaN(at.getTime()) || at.toISOString().slice(0, 10) !== day) {
    throw new RangeError(`not a YYYY-MM-DD day: ${day}`);
  }
  return at;
};

/**
 * The headers every answer of a deprecated route carries (docs/versioning.md):
 * `Deprecation: @<Unix seconds>` (RFC 9745), `Sunset: <HTTP date>` (RFC 8594)
 * and the migration guide as `Link; rel="deprecation"`. A sunset less than
 * twelve months after the deprecation breaks the policy, and is refused at
 * start-up rather than announced.
 */
export function deprecationHeaders(deprecation: RouteDeprecation): Record<string, string> {
  const since = utcDay(deprecation.since);
  const sunset = utcDay(deprecation.sunset);
  const earliest = new Date(since);
  earliest.setUTCMonth(earliest.getUTCMonth() + MONTHS_OF_NOTICE);
  if (sunset < earliest) throw new RangeError(`a sunset on ${deprecation.sunset} gives less than ${MONTHS_OF_NOTICE} months' notice after ${deprecation.since}`);
  return {
    Deprecation: `@${since.getTime() / 1000}`,
    Sunset: sunset.toUTCString(),
    Link: `<${deprecation.link}>; rel="deprecation"`,
  };
}
