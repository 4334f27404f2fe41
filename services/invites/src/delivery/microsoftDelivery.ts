import type { Event } from "@microsoft/microsoft-graph-types";
import type { Knex } from "@sched/db";
import type { ConnectionRecord } from "../db/connections.js";
import { findProviderEvent, type ClaimedChange } from "../db/deliveries.js";
import { graphEventBody, graphTransactionId } from "../domain/graphEvent.js";
import { DeliveryFailure } from "../domain/retry.js";
import { NOT_ON_PROVIDER } from "./googleDelivery.js";
import { graphStatusOf } from "./microsoft.js";
import type { ConnectionVault } from "./vault.js";

/**
 * Puts one meeting change on the organizer's Microsoft calendar, from which
 * Exchange sends the invitations, updates and cancellations to the
 * attendees (removed ones are told by the update that drops them). Every
 * call is safe to repeat: the event is created with a `transactionId`
 * derived from the meeting, so a create that succeeded before a crash
 * answers with the event it made; an event it created comes back as
 * `inserted`, for the caller to store with the outcome.
 */
export async function deliverThroughMicrosoft(db: Knex, vault: ConnectionVault, connection: ConnectionRecord, change: ClaimedChange): Promise<"sent" | { inserted: string } | typeof NOT_ON_PROVIDER> {
  const session = vault.microsoft(connection);
  const { graph } = session;
  const known = await findProviderEvent(db, change.meetingId);
  const body = graphEventBody(change.meeting, change.organizer.email);
  try {
    if (change.meeting.status === "cancelled") {
      if (!known) return NOT_ON_PROVIDER;
      // Cancelling (rather than deleting) is what mails the attendees; an event already gone has nobody left to tell.
      await graph.api(`/me/events/${encodeURIComponent(known.providerEventId)}/cancel`).post({ comment: "This meeting was cancelled." }).catch(ignoreStatus(404));
      return "sent";
    }
    if (known) {
      const patched = (await graph.api(`/me/events/${encodeURIComponent(known.providerEventId)}`).patch(body).catch(ignoreStatus(404))) as Event | undefined;
      if (patched) return "sent";
    }
    const created = (await graph.api("/me/events").post({ ...body, transactionId: graphTransactionId(change.meetingId) })) as Event;
    if (!created.id) throw new DeliveryFailure("transient", "Microsoft Graph: the created event came back without an id");
    return { inserted: created.id };
  } catch (err) {
    throw session.failureOf(err);
  }
}

/** Turns the given statuses into `undefined` (an expected answer), anything else stays an error. */
function ignoreStatus(...statuses: number[]) {
  return (err: unknown): undefined => {
    if (statuses.includes(graphStatusOf(err) ?? 0)) return undefined;
    throw err;
  };
}
