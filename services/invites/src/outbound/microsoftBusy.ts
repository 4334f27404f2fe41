import type { Calendar, ScheduleInformation } from "@microsoft/microsoft-graph-types";
import type { BusyInterval } from "@sched/proto";
import type { ConnectionRecord } from "../db/queries.js";
import { busyCalendarsOf, PRIMARY_CALENDAR } from "../domain/busyCalendars.js";
import { busyOfCalendarView, busyOfSchedule, graphDateTime } from "../domain/graphEvent.js";
import { DeliveryFailure } from "../domain/retry.js";
import { readCalendarView } from "./graphCalendarView.js";
import type { MicrosoftSession } from "./microsoft.js";
import type { ConnectionVault } from "./vault.js";

/**
 * Busy time of a Microsoft connection's chosen calendars over [from, to),
 * answered in UTC. The main calendar through getSchedule (one request: the
 * mailbox's free/busy, which is that calendar's); every other chosen one
 * through its calendar view (one request each, more past 500 events),
 * since getSchedule answers per mailbox, not per calendar. A user who chose
 * none counts nothing. Graph answers spans of up to 62 days (getSchedule);
 * the API asks at most 31 (the longest horizon) at a time.
 */
export async function microsoftBusy(vault: ConnectionVault, connection: ConnectionRecord, from: string, to: string, signal: AbortSignal): Promise<BusyInterval[]> {
  const chosen = busyCalendarsOf(connection) ?? [PRIMARY_CALENDAR];
  if (chosen.length === 0) return [];
  const session = vault.microsoft(connection);
  try {
    const parts = await Promise.all(chosen.map((id) => (id === PRIMARY_CALENDAR ? scheduleBusy(session, connection, from, to, signal) : calendarBusy(session, id, from, to, signal))));
    return parts.flat().sort((a, b) => a[0] - b[0]);
  } catch (err) {
    throw session.failureOf(err);
  }
}

async function scheduleBusy(session: MicrosoftSession, connection: ConnectionRecord, from: string, to: string, signal: AbortSignal): Promise<BusyInterval[]> {
  if (!connection.accountEmail) throw new DeliveryFailure("permanent", "Microsoft: the connection has no account address to ask getSchedule about");
  const answer = (await session.graph
    .api("/me/calendar/getSchedule")
    .header("Prefer", 'outlook.timezone="UTC"')
    .option("signal", signal)
    .post({ schedules: [connection.accountEmail], startTime: graphDateTime(Date.parse(from)), endTime: graphDateTime(Date.parse(to)), availabilityViewInterval: 15 })) as { value?: ScheduleInformation[] };
  const schedule = answer.value?.find((s) => s.scheduleId?.toLowerCase() === connection.accountEmail) ?? answer.value?.[0];
  if (schedule?.error) throw new DeliveryFailure("transient", `Microsoft getSchedule: ${schedule.error.responseCode ?? ""} ${schedule.error.message ?? ""}`.trim());
  return busyOfSchedule(schedule);
}

async function calendarBusy(session: MicrosoftSession, calendarId: string, from: string, to: string, signal: AbortSignal): Promise<BusyInterval[]> {
  const events = await readCalendarView(session, `/me/calendars/${encodeURIComponent(calendarId)}/calendarView`, Date.parse(from), Date.parse(to), ["start", "end", "showAs", "isCancelled"], signal);
  return busyOfCalendarView(events);
}

/** Calendars listed a page at a time; Graph follows with `@odata.nextLink`. */
const CALENDARS_PAGE = 100;

/**
 * The calendars of a Microsoft account (`/me/calendars`): its default one
 * as `primary` (what getSchedule reads), the others by their Graph ids.
 */
export async function microsoftCalendars(vault: ConnectionVault, connection: ConnectionRecord, signal: AbortSignal): Promise<Array<{ id: string; name: string }>> {
  const session = vault.microsoft(connection);
  const calendars: Calendar[] = [];
  try {
    let page = (await session.graph.api("/me/calendars").select(["id", "name", "isDefaultCalendar"]).top(CALENDARS_PAGE).option("signal", signal).get()) as { value?: Calendar[]; "@odata.nextLink"?: string };
    calendars.push(...(page.value ?? []));
    while (page["@odata.nextLink"]) {
      page = (await session.graph.api(page["@odata.nextLink"]).option("signal", signal).get()) as typeof page;
      calendars.push(...(page.value ?? []));
    }
  } catch (err) {
    throw session.failureOf(err);
  }
  return calendars
    .filter((c): c is Calendar & { id: string } => typeof c.id === "string")
    .map((c) => ({ id: c.isDefaultCalendar ? PRIMARY_CALENDAR : c.id, name: c.name ?? c.id }))
    .sort((a, b) => Number(b.id === PRIMARY_CALENDAR) - Number(a.id === PRIMARY_CALENDAR));
}
