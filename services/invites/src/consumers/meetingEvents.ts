import type { Bus, Stoppable } from "@sched/bus";
import type { Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import { meetingEvents } from "@sched/proto";
import { recordInviteDelivery, traceContextIn, tracingEnabled } from "@sched/telemetry";
import { type OwedChange, recordAnswerResets, recordChanges } from "../db/queries.js";
import { answerResetOf } from "../domain/answeredVersion.js";
import { changeOf, plannedDeliveries } from "../domain/plan.js";

export const MEETING_EVENTS_CONSUMER = "invites-meeting-events";

const EVENTS_PER_BATCH = 100;

/**
 * Turns every meeting event into delivery rows, once: every event waiting,
 * up to a hundred, in one statement. Acknowledged only after the rows are
 * committed, and a redelivered event finds its rows already there: so an
 * event is never lost and never owes twice. Replicas may record batches
 * side by side, so the worker, not the order of recording, keeps a
 * meeting's changes in order. A change to a new time also marks from which
 * sequence replies answer it (answerResetOf). Each change keeps the trace context of the
 * request that caused it, so its delivery joins that trace. Delivering is
 * the worker's job, which `recorded` wakes; `simulated` wakes the outbox
 * relay for the events of test mode's deliveries, settled here. Only the database can make this
 * fail, so a batch is retried for as long as it takes.
 */
export function consumeMeetingEvents(bus: Bus, db: Knex, logger: Logger, recorded: () => void, simulated: () => void): Promise<Stoppable> {
  const options = { durable: MEETING_EVENTS_CONSUMER, events: meetingEvents, maxBatch: EVENTS_PER_BATCH, backoffMs: [200, 1_000, 5_000, 15_000, 30_000] };
  return bus.consumeBatches(options, async (messages) => {
    // Every change, even one owing nothing: the next change of its meeting waits to see it recorded.
    // With tracing off there is no context to keep, and reading `headers` would decode every event's headers from the wire.
    const tracing = tracingEnabled();
    const owed: OwedChange[] = messages.map((message) => {
      return { change: changeOf(message.payload), planned: plannedDeliveries(message.payload), traceContext: tracing ? (traceContextIn(message.headers) ?? null) : null };
    });
    // Before the changes: the new invitations, which the worker sends once these are recorded, find the replies to the old ones refused.
    await recordAnswerResets(db, messages.map((m) => answerResetOf(m.payload)).filter((r) => r !== undefined));
    const results = await recordChanges(db, owed);
    let live = false;
    let simulatedAny = false;
    for (const r of results) {
      if (r.mode === "test") for (let i = 0; i < r.added; i++) recordInviteDelivery("simulated", r.channel);
      else live = true;
      if (r.mode === "test" && r.added > 0) simulatedAny = true;
    }
    logger.debug({ events: messages.length, changes: results.length, added: results.reduce((n, r) => n + r.added, 0) }, "invites recorded");
    // Even a live change owing nothing may be the one a recorded change was waiting for.
    if (live) recorded();
    if (simulatedAny) simulated();
  });
}
