import type { Knex } from "@sched/db";
import type { ConnectionRecord } from "../db/connections.js";
import { findProviderEvent, type ClaimedChange } from "../db/deliveries.js";
import { googleEventBody, googleEventId, googleFailure, statusOf } from "./google.js";
import type { ConnectionVault } from "./vault.js";

/** Google could not carry this change (it never had the meeting): the participants are told by e-mail instead. */
export const NOT_ON_PROVIDER = "not-on-provider";

/**
 * Puts one meeting change on the organizer's Google Calendar, from which
 * Google sends the invitations, updates and cancellations to the attendees
 * (`sendUpdates: "all"`); removed attendees are told by the patch that
 * drops them. Every call is safe to repeat: the event id is derived from
 * the meeting, so an insert that succeeded before a crash answers 409 and
 * becomes a patch. An event it inserted comes back as `inserted`, for the
 * caller to store with the outcome (after Google took it, a failing
 * database must not look like a failed delivery).
 */
export async function deliverThroughGoogle(db: Knex, vault: ConnectionVault, connection: ConnectionRecord, change: ClaimedChange): Promise<"sent" | { inserted: string } | typeof NOT_ON_PROVIDER> {
  const { calendar } = vault.session(connection);
  const known = await findProviderEvent(db, change.meetingId);
  const body = googleEventBody(change.meeting, change.sequence, change.organizer.email);
  try {
    if (change.meeting.status === "cancelled") {
      if (!known) return NOT_ON_PROVIDER;
      await calendar.events.delete({ calendarId: "primary", eventId: known.providerEventId, sendUpdates: "all" }).catch(ignoreStatus(404, 410));
      return "sent";
    }
    if (known) {
      const patched = await calendar.events.patch({ calendarId: "primary", eventId: known.providerEventId, sendUpdates: "all", requestBody: body }).catch(ignoreStatus(404, 410));
      if (patched) return "sent";
    }
    const eventId = googleEventId(change.meetingId);
    const inserted = await calendar.events.insert({ calendarId: "primary", sendUpdates: "all", requestBody: { ...body, id: eventId } }).catch(ignoreStatus(409));
    if (!inserted) await calendar.events.patch({ calendarId: "primary", eventId, sendUpdates: "all", requestBody: body });
    return { inserted: eventId };
  } catch (err) {
    throw googleFailure(err);
  }
}

/** Turns the given statuses into `undefined` (an expected answer), anything else stays an error. */
function ignoreStatus(...statuses: number[]) {
  return (err: unknown): undefined => {
    if (statuses.includes(statusOf(err) ?? 0)) return undefined;
    throw err;
  };
}
