import { AppError } from "@sched/errors";
import { WEEKDAYS, type Preferences, type PreferencesPatch, type PreferredTime } from "@sched/proto";

/** The stored preferences in the contract's shape and order, whatever order jsonb kept. */
export function preferencesView(stored: Preferences): Preferences {
  return {
    preferredTimes: stored.preferredTimes.map(timeView),
    avoidDays: [...stored.avoidDays],
    bufferMinutes: stored.bufferMinutes,
    maxMeetingsPerDay: stored.maxMeetingsPerDay,
  };
}

function timeView(t: PreferredTime): PreferredTime {
  return { start: t.start, end: t.end, ...(t.days ? { days: [...t.days] } : {}) };
}

/**
 * The preferences after a PATCH: each field given replaces the stored one.
 * Days are kept in weekday order without repeats, so equal lists compare equal.
 */
export function applyPreferences(current: Preferences, patch: PreferencesPatch): Preferences {
  const preferredTimes = patch.preferredTimes?.map((t) => timeView({ ...t, ...(t.days ? { days: weekdayOrder(t.days) } : {}) }));
  const avoidDays = patch.avoidDays ? weekdayOrder(patch.avoidDays) : current.avoidDays;
  if (avoidDays.length === WEEKDAYS.length) {
    throw new AppError("invalid_request", "Invalid preferences.avoidDays: avoiding every day leaves no day to meet.", { param: "preferences.avoidDays" });
  }
  return {
    preferredTimes: preferredTimes ?? current.preferredTimes,
    avoidDays,
    bufferMinutes: patch.bufferMinutes !== undefined ? patch.bufferMinutes : current.bufferMinutes,
    maxMeetingsPerDay: patch.maxMeetingsPerDay !== undefined ? patch.maxMeetingsPerDay : current.maxMeetingsPerDay,
  };
}

function weekdayOrder<T extends (typeof WEEKDAYS)[number]>(days: readonly T[]): T[] {
  return WEEKDAYS.filter((d) => days.includes(d as T)) as T[];
}

export function samePreferences(a: Preferences, b: Preferences): boolean {
  return JSON.stringify(preferencesView(a)) === JSON.stringify(preferencesView(b));
}
