export * from "./calendar.js";
export { ZoneClock, isValidTimeZone } from "./zoneClock.js";
export { floatingRule, instantOfWallClock, occurrenceInstants, occurrenceStarts, occurrenceStartTimes, readIcsUtc, type SeriesRule } from "./recurrence.js";
