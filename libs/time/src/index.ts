export * from "./calendar.js";
export { ZoneClock, isValidTimeZone } from "./zoneClock.js";
