import { AppError } from "@sched/errors";
import { WEEKDAYS, type WorkingHoursEntry } from "@sched/proto";

/** Monday to Friday, 09:00–17:00 (api-decisions 4). */
export const DEFAULT_WORKING_HOURS: readonly WorkingHoursEntry[] = WEEKDAYS.slice(0, 5).map((day) => ({ day, start: "09:00", end: "17:00" }));

/**
 * The first entry (by position) whose window overlaps an earlier entry's on
 * the same day, with that earlier entry. Windows that only touch (09:00–12:00
 * and 12:00–17:00) do not overlap.
 */
export function findOverlap(entries: readonly WorkingHoursEntry[]): { index: number; overlaps: number } | undefined {
  for (let index = 1; index < entries.length; index++) {
    const entry = entries[index]!;
    for (let earlier = 0; earlier < index; earlier++) {
      const other = entries[earlier]!;
      if (other.day === entry.day && other.start < entry.end && entry.start < other.end) return { index, overlaps: earlier };
    }
  }
  return undefined;
}

/**
 * Checks a new working-hours list and returns it in the order it is kept:
 * by weekday, then by start. Overlapping entries are 400 naming the later one.
 */
export function checkWorkingHours(entries: readonly WorkingHoursEntry[]): WorkingHoursEntry[] {
  const overlap = findOverlap(entries);
  if (overlap) {
    const param = `workingHours[${overlap.index}]`;
    const entry = entries[overlap.index]!;
    throw new AppError(
      "invalid_request",
      `Invalid ${param}: ${entry.day} ${entry.start}–${entry.end} overlaps workingHours[${overlap.overlaps}]; entries of one day must not overlap.`,
      { param },
    );
  }
  return sortWorkingHours(entries);
}

export function sortWorkingHours(entries: readonly WorkingHoursEntry[]): WorkingHoursEntry[] {
  const dayIndex = (e: WorkingHoursEntry) => WEEKDAYS.indexOf(e.day);
  return entries
    .map((e) => ({ day: e.day, start: e.start, end: e.end }))
    .sort((a, b) => dayIndex(a) - dayIndex(b) || a.start.localeCompare(b.start));
}
