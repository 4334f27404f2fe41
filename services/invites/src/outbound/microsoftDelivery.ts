import type { Client } from "@microsoft/microsoft-graph-client";
import type { Event } from "@microsoft/microsoft-graph-types";
import type { Knex } from "@sched/db";
import { type ClaimedChange, type ConnectionRecord, findProviderEvent } from "../db/queries.js";
import type { Meeting } from "@sched/proto";
import { changedOccurrencesInForce, occurrenceMeeting } from "../domain/changedOccurrences.js";
import { graphEventBody, graphSeriesBody, graphTransactionId, instanceShows, instanceWindow, isInstanceOf } from "../domain/graphEvent.js";
import { DeliveryFailure } from "../domain/retry.js";
import { calendarMeetingId, occurrenceStart } from "../domain/series.js";
import { NOT_ON_PROVIDER, type ByEmail } from "./googleDelivery.js";
import { graphStatusOf } from "./microsoft.js";
import type { ConnectionVault } from "./vault.js";

const CANCEL_COMMENT = "This meeting was cancelled.";

/**
 * Puts one meeting change on the organizer's Microsoft calendar, from which
 * Exchange sends the invitations, updates and cancellations to the
 * attendees (removed ones are told by the update that drops them). Every
 * call is safe to repeat: the event is created with a `transactionId`
 * derived from the meeting, so a create that succeeded before a crash
 * answers with the event it made; an event it created comes back as
 * `inserted`, for the caller to store with the outcome.
 *
 * A series is one recurring event (`recurrence`: Graph's pattern and range);
 * an occurrence changed or cancelled on its own is that instance of it,
 * patched or cancelled (Graph has no EXDATE: the series' cancelled
 * occurrences are cancelled instances). A rule Graph cannot say is not put
 * on the calendar at all: e-mail carries the series, as for a meeting the
 * provider never had (`byEmail` says why), and its occurrences follow it there.
 */
export async function deliverThroughMicrosoft(db: Knex, vault: ConnectionVault, connection: ConnectionRecord, change: ClaimedChange): Promise<"sent" | { inserted: string } | typeof NOT_ON_PROVIDER | ByEmail> {
  const session = vault.microsoft(connection);
  const { graph } = session;
  const known = await findProviderEvent(db, calendarMeetingId(change.meeting));
  const original = occurrenceStart(change.meeting);
  const eventUrl = (id: string) => `/me/events/${encodeURIComponent(id)}`;
  try {
    if (original) return known ? await deliverOccurrence(graph, known.providerEventId, original, change) : NOT_ON_PROVIDER;
    if (change.meeting.status === "cancelled") {
      if (!known) return NOT_ON_PROVIDER;
      // Cancelling (rather than deleting) is what mails the attendees; an event already gone has nobody left to tell.
      await graph.api(`${eventUrl(known.providerEventId)}/cancel`).post({ comment: CANCEL_COMMENT }).catch(ignoreStatus(404));
      return "sent";
    }
    let body: Event;
    if (change.series) {
      const series = graphSeriesBody(change.meeting, change.series, change.organizer.email);
      if (!series.ok) {
        // The calendar's copy under the old rule goes (its attendees told), so e-mail's invitation is the only one.
        if (known) await graph.api(`${eventUrl(known.providerEventId)}/cancel`).post({ comment: CANCEL_COMMENT }).catch(ignoreStatus(404));
        return { byEmail: `Microsoft Graph cannot repeat the series as its rule says (${series.reason}); sent by e-mail` };
      }
      body = series.body;
    } else body = graphEventBody(change.meeting, change.organizer.email);
    let result: "sent" | { inserted: string } | undefined;
    let eventId: string | undefined;
    if (known) {
      const patched = (await graph.api(eventUrl(known.providerEventId)).patch(body).catch(ignoreStatus(404))) as Event | undefined;
      if (patched) [result, eventId] = ["sent", known.providerEventId];
    }
    if (!result) {
      const created = (await graph.api("/me/events").post({ ...body, transactionId: graphTransactionId(change.meetingId) })) as Event;
      if (!created.id) throw new DeliveryFailure("transient", "Microsoft Graph: the created event came back without an id");
      [result, eventId] = [{ inserted: created.id }, created.id];
    }
    // Exchange drops a series' exceptions when its pattern is written, and a new event has none: its cancelled
    // occurrences are cancelled again, and its changed ones changed again where Exchange lost the change.
    for (const cancelled of change.series?.cancelledStarts ?? []) await cancelInstance(graph, eventId!, cancelled, change.meeting);
    for (const occurrence of changedOccurrencesInForce(change.series, Date.now())) await restoreOccurrence(graph, eventId!, occurrenceMeeting(change.meeting, occurrence), change.organizer.email);
    return result;
  } catch (err) {
    throw session.failureOf(err);
  }
}

/**
 * One occurrence of the organizer's recurring event changed or cancelled on
 * its own: Graph's instance of it (found by its original start) is patched
 * or cancelled, and Exchange tells the attendees about that occurrence only.
 * An instance that is gone (already cancelled) needs no cancelling; one the
 * pattern does not have cannot be changed.
 */
async function deliverOccurrence(graph: Client, seriesEventId: string, originalStart: string, change: ClaimedChange): Promise<"sent"> {
  if (change.meeting.status === "cancelled") {
    await cancelInstance(graph, seriesEventId, originalStart, change.meeting);
    return "sent";
  }
  const instance = await findInstance(graph, seriesEventId, originalStart, change.meeting);
  if (!instance?.id) throw new DeliveryFailure("permanent", `Microsoft Graph: the recurring event has no occurrence starting ${originalStart}`);
  await graph.api(`/me/events/${encodeURIComponent(instance.id)}`).patch(graphEventBody(change.meeting, change.organizer.email));
  return "sent";
}

async function cancelInstance(graph: Client, seriesEventId: string, originalStart: string, meeting: Meeting): Promise<void> {
  const instance = await findInstance(graph, seriesEventId, originalStart, meeting);
  if (instance?.id) await graph.api(`/me/events/${encodeURIComponent(instance.id)}/cancel`).post({ comment: CANCEL_COMMENT }).catch(ignoreStatus(404));
}

/**
 * A changed occurrence of the series, as its instance should show it: patched
 * again when the instance does not (Exchange lost the change), left alone
 * when it does, so attendees get no update for what did not change. An
 * instance the pattern no longer has is left: the meetings service drops
 * changed occurrences a new pattern does not have.
 */
async function restoreOccurrence(graph: Client, seriesEventId: string, occurrence: Meeting, organizerEmail: string): Promise<void> {
  const instance = await findInstance(graph, seriesEventId, occurrence.originalStartTime!, occurrence);
  const body = graphEventBody(occurrence, organizerEmail);
  if (instance?.id && !instanceShows(instance, body)) await graph.api(`/me/events/${encodeURIComponent(instance.id)}`).patch(body);
}

/** The live instance of the series whose original start is this one, through `instances` (pages followed); undefined when there is none. */
async function findInstance(graph: Client, seriesEventId: string, originalStart: string, meeting: Meeting): Promise<Event | undefined> {
  let page = (await graph
    .api(`/me/events/${encodeURIComponent(seriesEventId)}/instances`)
    .query(instanceWindow(originalStart, meeting))
    .select(["id", "originalStart", "isCancelled", "subject", "start", "end", "attendees"])
    .header("Prefer", 'outlook.timezone="UTC"')
    .get()
    .catch(ignoreStatus(404))) as { value?: Event[]; "@odata.nextLink"?: string } | undefined;
  while (page) {
    const found = page.value?.find((e) => isInstanceOf(e, originalStart) && !e.isCancelled);
    if (found) return found;
    const next = page["@odata.nextLink"];
    page = next ? ((await graph.api(next).get()) as typeof page) : undefined;
  }
  return undefined;
}

/** Turns the given statuses into `undefined` (an expected answer), anything else stays an error. */
function ignoreStatus(...statuses: number[]) {
  return (err: unknown): undefined => {
    if (statuses.includes(graphStatusOf(err) ?? 0)) return undefined;
    throw err;
  };
}
