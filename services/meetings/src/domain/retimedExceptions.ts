import { DateTime } from "luxon";
import { occurrenceStarts } from "./recurrence.js";
import { ruleOf, type ExceptionRecord, type SeriesRecord } from "./series.js";
import { endTimeOf } from "./timing.js";

/**
 * The exceptions a series keeps when its time or rule changes
 * (docs/recurrence.md, "A new time or rule"). Each exception not yet ended
 * belongs to an occurrence; after the change that occurrence is the new
 * series' occurrence on the same day in the series' zone, if it has one not
 * yet ended: the exception is kept there (its original start becomes that
 * occurrence's start). An exception that only changed other fields, or
 * cancelled the occurrence, follows the new time and duration; one moved to
 * a time of its own keeps it. An exception whose day the new series has no
 * occurrence on is dropped: there is nothing left for it to change or cancel.
 * Ended exceptions are not given here: they stay as they were.
 */
export function retimedExceptions(before: SeriesRecord, after: SeriesRecord, exceptions: readonly ExceptionRecord[], now: Date): ExceptionRecord[] {
  const kept = new Map<number, ExceptionRecord>();
  const byOriginal = [...exceptions].sort((a, b) => a.originalStart.getTime() - b.originalStart.getTime());
  for (const e of byOriginal) {
    const day = DateTime.fromJSDate(e.originalStart, { zone: before.timeZone }).setZone(after.timeZone).startOf("day");
    const starts = occurrenceStarts(ruleOf(after), day.toJSDate(), day.plus({ days: 1 }).toJSDate());
    const start = starts.find((s) => DateTime.fromJSDate(s, { zone: after.timeZone }).hasSame(day, "day"));
    if (!start || kept.has(start.getTime()) || endTimeOf(start, after.duration).getTime() <= now.getTime()) continue;
    const followsSeries = e.startTime.getTime() === e.originalStart.getTime() && e.duration === before.duration;
    kept.set(start.getTime(), { ...e, originalStart: start, ...(followsSeries ? { startTime: start, duration: after.duration } : {}) });
  }
  return [...kept.values()];
}
