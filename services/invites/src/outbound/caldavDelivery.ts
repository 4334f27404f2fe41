import type { Knex } from "@sched/db";
import { type ClaimedChange, type ConnectionRecord, findProviderEvent } from "../db/queries.js";
import { changedOccurrencesInForce, occurrenceMeeting } from "../domain/changedOccurrences.js";
import { calendarObject } from "../domain/ics.js";
import { DeliveryFailure } from "../domain/retry.js";
import { calendarMeetingId, occurrenceStart } from "../domain/series.js";
import { seriesObject, type SeriesObjectChange } from "../domain/seriesObject.js";
import { CalDavRefusal, type CalDavAccount } from "./caldav.js";
import { NOT_ON_PROVIDER } from "./googleDelivery.js";
import type { ConnectionVault } from "./vault.js";

/**
 * Puts one meeting change in the organizer's CalDAV calendar as an event
 * with the participants as ATTENDEEs: the server schedules (RFC 6638), so
 * it invites, updates, tells removed attendees, and cancels when the event
 * is deleted. Every call is safe to repeat: the event lives at one URL per
 * meeting and a PUT replaces it whole. A new event's URL comes back as
 * `inserted`, for the caller to store. A series is one calendar object
 * resource at the series' URL: the master event with its rule, and each
 * occurrence changed on its own as a VEVENT of the same UID beside it
 * (read from the server and written back whole, so the others stay).
 */
export async function deliverThroughCalDav(
  db: Knex,
  vault: ConnectionVault,
  connection: ConnectionRecord,
  change: ClaimedChange,
  settings: { uidDomain: string; timeoutMs: number },
): Promise<"sent" | { inserted: string } | typeof NOT_ON_PROVIDER> {
  const stored = await findProviderEvent(db, calendarMeetingId(change.meeting));
  const known = stored?.connectionId === connection.id ? stored.providerEventId : undefined;
  const original = occurrenceStart(change.meeting);
  if ((change.meeting.status === "cancelled" || original) && !known) return NOT_ON_PROVIDER;
  const account = await vault.caldav(connection, settings.timeoutMs).catch((err: unknown) => {
    if (err instanceof CalDavRefusal) throw new DeliveryFailure(err.kind === "credentials" ? "revoked" : "transient", err.message);
    throw err;
  });
  try {
    if (change.meeting.status === "cancelled" && !original) {
      await account.deleteEvent(known!);
      return "sent";
    }
    const url = known ?? new URL(`${encodeURIComponent(change.meetingId)}.ics`, await account.eventCalendarUrl(connection.busyCalendars)).href;
    const event = () => calendarObject({ meeting: change.meeting, series: change.series ?? undefined, sequence: change.sequence, organizerEmail: change.organizer.email, uidDomain: settings.uidDomain });
    if (!change.series) await account.putEvent(url, event());
    else {
      const occurrences = () =>
        changedOccurrencesInForce(change.series, Date.now()).map((o) => ({
          originalStart: o.originalStartTime,
          ics: calendarObject({ meeting: occurrenceMeeting(change.meeting, o), series: change.series ?? undefined, sequence: change.sequence, organizerEmail: change.organizer.email, uidDomain: settings.uidDomain }),
        }));
      const objectChange: SeriesObjectChange = !original
        ? { kind: "series", ics: event(), occurrences: occurrences() }
        : change.meeting.status === "cancelled"
          ? { kind: "occurrence-cancelled", originalStart: original, sequence: change.sequence }
          : { kind: "occurrence", ics: event(), originalStart: original };
      const current = known ? await storedObject(account, known, settings.timeoutMs) : undefined;
      // An occurrence of a series the calendar no longer holds: the participants are told by e-mail.
      if (original && current === undefined) return NOT_ON_PROVIDER;
      await account.putEvent(url, seriesObject(current, change.series, objectChange));
    }
    return known ? "sent" : { inserted: url };
  } catch (err) {
    if (err instanceof DeliveryFailure) throw err;
    throw new DeliveryFailure("transient", `CalDAV: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The calendar object at `url` as the server holds it now (with the answers it wrote back), or undefined when it is gone. */
async function storedObject(account: CalDavAccount, url: string, timeoutMs: number): Promise<string | undefined> {
  const [found] = await account.readEvents([url], AbortSignal.timeout(timeoutMs));
  return found?.ics;
}
