import { formatTimestamp, NO_PREFERENCES, type Preferences } from "@sched/proto";
import type { Interval, RankedPerson } from "../src/domain/fit.js";
import { learnPatterns, type HistoryMeeting } from "../src/domain/patterns.js";

export const MIN = 60_000;
export const HOUR = 60 * MIN;
export const DAY = 24 * HOUR;

/** Monday 2026-03-02 00:00 UTC. */
export const MONDAY = Date.parse("2026-03-02T00:00:00Z");
/** "Now" in the service tests: the Friday before the ranked week. */
export const NOW = MONDAY + 4 * DAY;
/** Monday of the ranked week. */
export const NEXT_WEEK = MONDAY + 7 * DAY;

/** A time as the bus contract spells it: UTC, whole seconds. */
export const iso = (ms: number) => formatTimestamp(ms);

/** A one-hour candidate of the ranked week, `dayOffset` days after its Monday. */
export const slot = (dayOffset: number, hour: number) => ({ start: iso(NEXT_WEEK + dayOffset * DAY + hour * HOUR), end: iso(NEXT_WEEK + dayOffset * DAY + (hour + 1) * HOUR) });

/** `weeks` weeks of one-hour meetings at the given UTC weekday (0 = Monday) and hour, before MONDAY, each scheduled `leadDays` ahead. */
export function weeklyHistory(slots: ReadonlyArray<{ weekday: number; hour: number }>, weeks: number, leadDays = 3): HistoryMeeting[] {
  const history: HistoryMeeting[] = [];
  for (let w = 1; w <= weeks; w++) {
    for (const { weekday, hour } of slots) {
      const start = MONDAY - w * 7 * DAY + weekday * DAY + hour * HOUR;
      history.push({ start, durationMinutes: 60, scheduledAt: start - leadDays * DAY });
    }
  }
  return history;
}

export function rankedPerson(
  userId: string,
  options: { history?: HistoryMeeting[]; preferences?: Partial<Preferences>; meetings?: Interval[]; isCaller?: boolean; zone?: string; name?: string } = {},
): RankedPerson {
  const zone = options.zone ?? "UTC";
  return {
    userId,
    name: options.name ?? userId,
    isCaller: options.isCaller ?? false,
    zone,
    patterns: learnPatterns(options.history ?? [], zone),
    preferences: { ...NO_PREFERENCES, ...options.preferences },
    meetings: options.meetings ?? [],
  };
}

/** One-hour candidates at the given offsets (hours) from MONDAY + `weekOffset` weeks. */
export function hourSlots(hoursFromMonday: readonly number[], weekOffset = 1): Interval[] {
  return hoursFromMonday.map((h) => ({ start: MONDAY + weekOffset * 7 * DAY + h * HOUR, end: MONDAY + weekOffset * 7 * DAY + (h + 1) * HOUR }));
}
