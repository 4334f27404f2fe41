import type { Knex } from "@sched/db";
import { type ClaimedChange, type ConnectionRecord, findProviderEvent } from "../db/queries.js";
import { DeliveryFailure } from "../domain/retry.js";
import { calendarMeetingId, occurrenceStart } from "../domain/series.js";
import { changedOccurrencesInForce, occurrenceMeeting } from "../domain/changedOccurrences.js";
import { googleEventBody, googleEventId, googleFailure, statusOf, type GoogleSession } from "./google.js";
import type { ConnectionVault } from "./vault.js";

/** Google could not carry this change (it never had the meeting): the participants are told by e-mail instead. */
export const NOT_ON_PROVIDER = "not-on-provider";

/** A provider will not carry the meeting, for the reason given (a rule it cannot say): e-mail carries it, and the reason is kept with its deliveries. */
export interface ByEmail {
  byEmail: string;
}

/**
 * Puts one meeting change on the organizer's Google Calendar, from which
 * Google sends the invitations, updates and cancellations to the attendees
 * (`sendUpdates: "all"`); removed attendees are told by the patch that
 * drops them. Every call is safe to repeat: the event id is derived from
 * the meeting, so an insert that succeeded before a crash answers 409 and
 * becomes a patch. An event it inserted comes back as `inserted`, for the
 * caller to store with the outcome (after Google took it, a failing
 * database must not look like a failed delivery). A series is one
 * recurring event; a change of one of its occurrences goes to that instance
 * of it (deliverOccurrence).
 */
export async function deliverThroughGoogle(db: Knex, vault: ConnectionVault, connection: ConnectionRecord, change: ClaimedChange): Promise<"sent" | { inserted: string } | typeof NOT_ON_PROVIDER> {
  const { calendar } = vault.session(connection);
  const known = await findProviderEvent(db, calendarMeetingId(change.meeting));
  const original = occurrenceStart(change.meeting);
  if (original) return known ? deliverOccurrence(calendar, known.providerEventId, original, change) : NOT_ON_PROVIDER;
  const body = googleEventBody(change.meeting, change.sequence, change.organizer.email, change.series);
  try {
    if (change.meeting.status === "cancelled") {
      if (!known) return NOT_ON_PROVIDER;
      await calendar.events.delete({ calendarId: "primary", eventId: known.providerEventId, sendUpdates: "all" }).catch(ignoreStatus(404, 410));
      return "sent";
    }
    if (known) {
      const patched = await calendar.events.patch({ calendarId: "primary", eventId: known.providerEventId, sendUpdates: "all", requestBody: body }).catch(ignoreStatus(404, 410));
      if (patched) {
        await restoreChangedOccurrences(calendar, known.providerEventId, change);
        return "sent";
      }
    }
    const eventId = googleEventId(change.meetingId);
    const inserted = await calendar.events.insert({ calendarId: "primary", sendUpdates: "all", requestBody: { ...body, id: eventId } }).catch(ignoreStatus(409));
    if (!inserted) await calendar.events.patch({ calendarId: "primary", eventId, sendUpdates: "all", requestBody: body });
    return { inserted: eventId };
  } catch (err) {
    throw googleFailure(err);
  }
}

/**
 * One occurrence of the organizer's recurring event changed or cancelled on
 * its own: Google's instance of it (found by its original start, whatever
 * became of it since) is patched or deleted, and Google tells the attendees
 * about that occurrence only. An instance that is gone (already cancelled)
 * needs no cancelling; one the rule does not have cannot be changed.
 */
async function deliverOccurrence(calendar: GoogleSession["calendar"], recurringEventId: string, originalStart: string, change: ClaimedChange): Promise<"sent"> {
  const cancelled = change.meeting.status === "cancelled";
  try {
    const found = await calendar.events.instances({ calendarId: "primary", eventId: recurringEventId, originalStart, maxResults: 1 }).catch(ignoreStatus(404, 410));
    const instanceId = found?.data.items?.[0]?.id;
    if (!instanceId) {
      if (cancelled) return "sent";
      throw new DeliveryFailure("permanent", `Google: the recurring event has no occurrence starting ${originalStart}`);
    }
    if (cancelled) await calendar.events.delete({ calendarId: "primary", eventId: instanceId, sendUpdates: "all" }).catch(ignoreStatus(404, 410));
    else await calendar.events.patch({ calendarId: "primary", eventId: instanceId, sendUpdates: "all", requestBody: googleEventBody(change.meeting, change.sequence, change.organizer.email, change.series) });
    return "sent";
  } catch (err) {
    throw googleFailure(err);
  }
}

/**
 * A series moved to a new time or rule: Google makes the instances anew at
 * the new times, without the exceptions made before, and the meetings
 * service keeps those on days the series still has under a new original
 * start (`droppedOccurrences` names the old ones). Each changed occurrence
 * not yet ended is patched again on its instance at its new original start,
 * so it stays where it was moved and whoever was added to it alone is
 * invited to it there (`sendUpdates: "all"`). Nothing to do for a change
 * that dropped nothing: the instances kept their exceptions.
 */
async function restoreChangedOccurrences(calendar: GoogleSession["calendar"], recurringEventId: string, change: ClaimedChange): Promise<void> {
  if (!change.series?.droppedOccurrences?.length) return;
  for (const occurrence of changedOccurrencesInForce(change.series, Date.now())) {
    // One the new rule's instances do not have (it ended in between, say) is left: the series itself went through.
    await deliverOccurrence(calendar, recurringEventId, occurrence.originalStartTime, { ...change, meeting: occurrenceMeeting(change.meeting, occurrence) }).catch((err: unknown) => {
      if (err instanceof DeliveryFailure && err.kind === "permanent") return;
      throw err;
    });
  }
}

/** Turns the given statuses into `undefined` (an expected answer), anything else stays an error. */
function ignoreStatus(...statuses: number[]) {
  return (err: unknown): undefined => {
    if (statuses.includes(statusOf(err) ?? 0)) return undefined;
    throw err;
  };
}
