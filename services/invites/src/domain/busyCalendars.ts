import type { CalendarProvider } from "@sched/proto";

/**
 * The id the main calendar of a Google or Microsoft connection goes by in
 * the API, whatever the provider calls it (Google its address, Graph a long
 * opaque id): what `busyCalendars` held before other calendars could be chosen.
 */
export const PRIMARY_CALENDAR = "primary";

interface BusyChoice {
  provider: CalendarProvider;
  /** Null: nothing chosen yet. */
  busyCalendars: readonly string[] | null;
}

/**
 * The calendars whose events count as busy time: those the user chose,
 * else the provider's default — every calendar of a CalDAV account (null:
 * all, whatever the server lists), the main calendar of a Google or
 * Microsoft one (the one calendar there was to count before others could be chosen).
 */
export function busyCalendarsOf(connection: BusyChoice): readonly string[] | null {
  if (connection.busyCalendars) return connection.busyCalendars;
  return connection.provider === "caldav" ? null : [PRIMARY_CALENDAR];
}

/** Whether one listed calendar counts as busy time. */
export function countsAsBusy(connection: BusyChoice, calendarId: string): boolean {
  return busyCalendarsOf(connection)?.includes(calendarId) ?? true;
}

/**
 * The windows one long span is read in when a provider bounds each request's
 * span (Graph's calendarView: 1,825 days): consecutive, each at most
 * `maxMs` long, together exactly [fromMs, toMs).
 */
export function windowsOf(fromMs: number, toMs: number, maxMs: number): Array<[number, number]> {
  const windows: Array<[number, number]> = [];
  for (let start = fromMs; start < toMs; start += maxMs) windows.push([start, Math.min(start + maxMs, toMs)]);
  return windows;
}
