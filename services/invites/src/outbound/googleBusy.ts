import type { BusyInterval } from "@sched/proto";
import type { calendar_v3 } from "@googleapis/calendar";
import type { ConnectionRecord } from "../db/queries.js";
import { busyCalendarsOf, PRIMARY_CALENDAR } from "../domain/busyCalendars.js";
import { DeliveryFailure } from "../domain/retry.js";
import { googleFailure, statusOf } from "./google.js";
import type { ConnectionVault } from "./vault.js";

const epochSeconds = (iso: string) => Math.floor(Date.parse(iso) / 1_000);

/**
 * Busy time of a Google connection's chosen calendars over [from, to): one
 * freebusy.query naming every chosen calendar, however many. A calendar
 * Google cannot answer for (gone, no longer shared) makes the whole answer
 * fail rather than pass its time off as free. A user who chose none counts nothing.
 */
export async function googleBusy(vault: ConnectionVault, connection: ConnectionRecord, from: string, to: string, signal: AbortSignal): Promise<BusyInterval[]> {
  const chosen = busyCalendarsOf(connection) ?? [PRIMARY_CALENDAR];
  if (chosen.length === 0) return [];
  const { calendar } = vault.session(connection);
  let answered: Record<string, calendar_v3.Schema$FreeBusyCalendar>;
  try {
    const res = await calendar.freebusy.query({ requestBody: { timeMin: from, timeMax: to, items: chosen.map((id) => ({ id })) } }, { signal });
    answered = res.data.calendars ?? {};
  } catch (err) {
    throw googleFailure(err);
  }
  const intervals: BusyInterval[] = [];
  for (const id of chosen) {
    const one = answered[id];
    if (!one || (one.errors && one.errors.length > 0)) throw new DeliveryFailure("transient", `Google: no free/busy for a chosen calendar (${one?.errors?.map((e) => e.reason).join(", ") ?? "missing"})`);
    for (const b of one.busy ?? []) if (b.start && b.end) intervals.push([epochSeconds(b.start), epochSeconds(b.end)]);
  }
  return intervals.sort((a, b) => a[0] - b[0]);
}

/** Calendars listed a page at a time; Google follows with `nextPageToken`. */
const CALENDARS_PAGE = 250;

/**
 * The calendars of a Google account that free/busy can read (its calendar
 * list, `freeBusyReader` access or more): its primary one as `primary`, the
 * others by their ids. A grant made before the calendar list was asked for
 * (without its scope) lists the primary calendar alone: connecting again
 * grants the rest.
 */
export async function googleCalendars(vault: ConnectionVault, connection: ConnectionRecord, signal: AbortSignal): Promise<Array<{ id: string; name: string }>> {
  const { calendar } = vault.session(connection);
  const listed: calendar_v3.Schema$CalendarListEntry[] = [];
  let pageToken: string | undefined;
  try {
    do {
      const res = await calendar.calendarList.list(
        { minAccessRole: "freeBusyReader", maxResults: CALENDARS_PAGE, fields: "items(id,summary,summaryOverride,primary),nextPageToken", ...(pageToken ? { pageToken } : {}) },
        { signal },
      );
      listed.push(...(res.data.items ?? []));
      pageToken = res.data.nextPageToken ?? undefined;
    } while (pageToken);
  } catch (err) {
    if (!lacksScope(err)) throw googleFailure(err);
    return [{ id: PRIMARY_CALENDAR, name: connection.accountEmail ?? "Primary calendar" }];
  }
  return listed
    .filter((c): c is calendar_v3.Schema$CalendarListEntry & { id: string } => typeof c.id === "string")
    .map((c) => ({ id: c.primary ? PRIMARY_CALENDAR : c.id, name: c.summaryOverride ?? c.summary ?? c.id }))
    .sort((a, b) => Number(b.id === PRIMARY_CALENDAR) - Number(a.id === PRIMARY_CALENDAR));
}

/** Google's 403 for a grant without the scope asked for (its other 403s are rate limits, to be reported as failures). */
function lacksScope(err: unknown): boolean {
  const data = (err as { response?: { data?: { error?: { errors?: Array<{ reason?: string }> } } } }).response?.data;
  return statusOf(err) === 403 && (data?.error?.errors ?? []).some((e) => e.reason === "insufficientPermissions");
}
