import type { Event } from "@microsoft/microsoft-graph-types";
import { windowsOf } from "../domain/busyCalendars.js";
import { graphDateTime } from "../domain/graphEvent.js";
import type { MicrosoftSession } from "./microsoft.js";

/**
 * The longest span Graph's calendarView answers: a longer one is refused
 * with 400 ErrorInvalidRequest "The range between the start and end dates
 * is greater than the allowed range. Maximum number of days: 1825"
 * (microsoftgraph/microsoft-graph-docs-contrib#6321; not on the reference page).
 */
const CALENDAR_VIEW_MAX_DAYS = 1_825;

/** Events of one calendar-view page; Graph follows with `@odata.nextLink` beyond it. */
const PAGE_SIZE = 500;
const DAY_MS = 86_400_000;

/**
 * The events and occurrences of a calendar view (`/me/calendarView` for the
 * default calendar, `/me/calendars/{id}/calendarView` for another) over
 * [fromMs, toMs), in UTC: one request per 1,825 days of span and per 500
 * events. An event across the edge of two windows is listed by both and
 * kept once. Graph's errors are thrown as the client raised them.
 */
export async function readCalendarView(session: MicrosoftSession, path: string, fromMs: number, toMs: number, select: readonly string[], signal?: AbortSignal): Promise<Event[]> {
  const prefer = `outlook.timezone="UTC", odata.maxpagesize=${PAGE_SIZE}`;
  const events = new Map<string, Event>();
  const keep = (page: { value?: Event[] }) => {
    for (const event of page.value ?? []) if (event.id && !events.has(event.id)) events.set(event.id, event);
  };
  for (const [from, to] of windowsOf(fromMs, toMs, CALENDAR_VIEW_MAX_DAYS * DAY_MS)) {
    const first = session.graph
      .api(path)
      .query({ startDateTime: graphDateTime(from).dateTime + "Z", endDateTime: graphDateTime(to).dateTime + "Z" })
      .select(["id", ...select])
      .header("Prefer", prefer);
    let page = (await (signal ? first.option("signal", signal) : first).get()) as { value?: Event[]; "@odata.nextLink"?: string };
    keep(page);
    while (page["@odata.nextLink"]) {
      const next = session.graph.api(page["@odata.nextLink"]).header("Prefer", prefer);
      page = (await (signal ? next.option("signal", signal) : next).get()) as typeof page;
      keep(page);
    }
  }
  return [...events.values()];
}
