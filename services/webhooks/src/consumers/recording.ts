import type { Knex } from "@sched/db";
import { newId } from "@sched/ids";
import { enabledEndpoints, ownerKey, recordEvents, type ClaimedDelivery, type EventToRecord, type RecordingPosition, type RecordingRoom } from "../db/queries.js";
import { subscribes } from "../domain/publicEvent.js";

/** A delivery worker that takes a batch's deliveries as the batch is recorded, as far as it has room (DeliveryWorker). */
export interface RecordingClaims {
  /** Holds room for up to `owed` deliveries of each endpoint until `adopt`: what the recording statement may claim. */
  reserve(owed: ReadonlyMap<string, number>): RecordingRoom;
  /** Gives back the room held and takes what was claimed (nothing, when the statement failed); `leftBehind`: some deliveries wait for a claim. */
  adopt(room: RecordingRoom, claimed: readonly ClaimedDelivery[], leftBehind: boolean): void;
}

/**
 * Records the events of one consumed batch, each with a delivery for every
 * enabled endpoint of its user and mode subscribed to its type: the owners'
 * endpoints read in one statement, the events and their deliveries written
 * in another (so all at once, or none). An event seen before (a redelivery,
 * or twice in the batch) records nothing again. Given `claims`, the
 * statement also claims for that worker what it has room for, and the
 * worker is told (and woken for what was left). How many events were new.
 */
export async function recordBatch(db: Knex, records: readonly EventToRecord[], claims?: RecordingClaims): Promise<number> {
  const recorded = await recordWithin(db, records, claims);
  recorded.adopt(true);
  return recorded.added;
}

/**
 * Records as recordBatch does: the worker takes what was claimed through
 * `adopt`, called once the recording is over (`committed` or not; on a
 * transaction, once it ended), so it never delivers what was not recorded.
 * Given `position`, the batch is recorded only if it moves the consumer's
 * position from where it was read (recordEvents), and `advanced` tells
 * whether it did.
 */
export async function recordWithin(
  db: Knex,
  records: readonly EventToRecord[],
  claims?: RecordingClaims,
  position?: RecordingPosition,
): Promise<{ added: number; advanced: boolean; adopt(committed: boolean): void }> {
  const seen = new Set<string>();
  const fresh = records.filter((r) => !seen.has(r.sourceEventId) && seen.add(r.sourceEventId));
  const endpoints = await enabledEndpoints(db, fresh.map((r) => ({ userId: r.userId, mode: r.event.mode })));
  const owed = fresh.map((r) => ({
    ...r,
    deliveries: (endpoints.get(ownerKey(r.userId, r.event.mode)) ?? []).filter((e) => subscribes(e.events, r.event.type)).map((e) => ({ id: newId("whd"), endpointId: e.id })),
  }));
  if (!claims) {
    const recorded = await recordEvents(db, owed, undefined, position);
    return { added: recorded.added, advanced: recorded.advanced, adopt: () => {} };
  }
  const perEndpoint = new Map<string, number>();
  for (const d of owed.flatMap((r) => r.deliveries)) perEndpoint.set(d.endpointId, (perEndpoint.get(d.endpointId) ?? 0) + 1);
  const room = claims.reserve(perEndpoint);
  try {
    const recorded = await recordEvents(db, owed, room, position);
    // A statement that fails, or whose transaction does not commit, claimed nothing: the room goes back, and the batch is consumed again.
    return {
      added: recorded.added,
      advanced: recorded.advanced,
      adopt: (committed) => (committed ? claims.adopt(room, recorded.claimed, recorded.leftBehind) : claims.adopt(room, [], false)),
    };
  } catch (err) {
    claims.adopt(room, [], false);
    throw err;
  }
}
