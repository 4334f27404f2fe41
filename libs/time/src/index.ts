export * from "./calendar.js";
export { ZoneClock, isValidTimeZone } from "./zoneClock.js";
export { floatingRule, instantOfWallClock, occurrenceStarts, readIcsUtc, type SeriesRule } from "./recurrence.js";
