import type { Knex } from "@sched/db";
import type { ConnectionRecord } from "../db/connections.js";
import { findProviderEvent, type ClaimedChange } from "../db/deliveries.js";
import { calendarObject } from "../domain/ics.js";
import { DeliveryFailure } from "../domain/retry.js";
import { CalDavRefusal } from "./caldav.js";
import { NOT_ON_PROVIDER } from "./googleDelivery.js";
import type { ConnectionVault } from "./vault.js";

/**
 * Puts one meeting change in the organizer's CalDAV calendar as an event
 * with the participants as ATTENDEEs: the server schedules (RFC 6638), so
 * it invites, updates, tells removed attendees, and cancels when the event
 * is deleted. Every call is safe to repeat: the event lives at one URL per
 * meeting and a PUT replaces it whole. A new event's URL comes back as
 * `inserted`, for the caller to store.
 */
export async function deliverThroughCalDav(
  db: Knex,
  vault: ConnectionVault,
  connection: ConnectionRecord,
  change: ClaimedChange,
  settings: { uidDomain: string; timeoutMs: number },
): Promise<"sent" | { inserted: string } | typeof NOT_ON_PROVIDER> {
  const stored = await findProviderEvent(db, change.meetingId);
  const known = stored?.connectionId === connection.id ? stored.providerEventId : undefined;
  if (change.meeting.status === "cancelled" && !known) return NOT_ON_PROVIDER;
  const account = await vault.caldav(connection, settings.timeoutMs).catch((err: unknown) => {
    if (err instanceof CalDavRefusal) throw new DeliveryFailure(err.kind === "credentials" ? "revoked" : "transient", err.message);
    throw err;
  });
  try {
    if (change.meeting.status === "cancelled") {
      await account.deleteEvent(known!);
      return "sent";
    }
    const url = known ?? new URL(`${encodeURIComponent(change.meetingId)}.ics`, await account.eventCalendarUrl(connection.busyCalendars)).href;
    await account.putEvent(url, calendarObject({ meeting: change.meeting, sequence: change.sequence, organizerEmail: change.organizer.email, uidDomain: settings.uidDomain }));
    return known ? "sent" : { inserted: url };
  } catch (err) {
    if (err instanceof DeliveryFailure) throw err;
    throw new DeliveryFailure("transient", `CalDAV: ${err instanceof Error ? err.message : String(err)}`);
  }
}
