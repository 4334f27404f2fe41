import { BatchNotReady, type EventMessage } from "@sched/bus";
import { isEmbedded, type Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import { recordedThrough, type EventToRecord } from "../db/queries.js";
import { recordBatch, recordWithin, type RecordingClaims } from "./recording.js";

/**
 * How long a batch waits for the events between the recorded position and
 * its first before they are taken as gone (removed from the stream by age or
 * limits, or acknowledged before positions were kept). Longer than
 * JetStream's acknowledgement wait (30 s): events a stopped replica held are
 * handed out again before then, and recorded in their place.
 */
const GONE_AFTER_MS = 45_000;

/**
 * A recording consumer's retries: short at first, since a batch waiting for
 * another replica's earlier events goes as soon as those are recorded; then
 * longer, for a database that is down (the bus looks again at a batch waiting
 * for earlier events at least every 2 s: @sched/bus retryPauseMs).
 */
export const RECORDING_BACKOFF_MS = [200, 500, 1_000, 2_000, 5_000, 15_000, 30_000];

/** How long a batch waits in hand for earlier events before its handler gives up to the back-off, and how often it looks. */
const WAIT_IN_PLACE_MS = 1_000;
const WAIT_STEP_MS = 20;

/** Turns a batch's events, read on `db` as recorded so far, into what they record. */
export type RecordsOf<M extends EventMessage> = (db: Knex, messages: readonly M[]) => Promise<EventToRecord[]>;

/**
 * Records one consumer's (durable's) batches in stream order, whichever
 * replica holds them. JetStream hands the replicas sharing a durable
 * different parts of the stream at once; each batch is recorded only from
 * the events that follow the consumer's position (the last sequence
 * recorded) directly: already recorded ones (a redelivery) are skipped, and
 * a batch that starts later, or whose events stop following one another,
 * waits (BatchNotReady, retried shortly) for the replica that holds the
 * events between. The recording statement itself moves the position, and
 * records nothing if another replica moved it first (the batch is then
 * looked at again from the new position): so a meeting's events are
 * recorded, and their deliveries numbered, in their order, and an update's
 * earlier state is read only once every event before it is recorded. The
 * position this recorder last wrote is kept, so while it is the one
 * recording (the elected replica) a batch costs no read of it. On an
 * embedded database one process consumes each durable, a batch at a time,
 * in order: its batches are recorded as they come, with no position to move
 * (a redelivered event still records nothing again).
 */
export class StreamRecorder {
  /** The gap this consumer has been waiting on, and since when. */
  private waiting: { through: number; next: number; since: number } | undefined;
  /** The position as this recorder last read or moved it; unknown after a failure, a wait or another replica's move. */
  private through: number | undefined;

  constructor(
    private readonly db: Knex,
    private readonly consumer: string,
    private readonly logger: Logger,
    private readonly claims?: RecordingClaims,
    private readonly goneAfterMs = GONE_AFTER_MS,
  ) {}

  /**
   * Records what of `messages` follows the position, looking again every
   * WAIT_STEP_MS for up to WAIT_IN_PLACE_MS while some wait for earlier
   * events (another replica records those meanwhile); resolves to how many
   * events were new, or throws BatchNotReady for a retry after the back-off.
   */
  async record<M extends EventMessage>(messages: readonly M[], recordsOf: RecordsOf<M>): Promise<number> {
    if (isEmbedded(this.db)) return recordBatch(this.db, await recordsOf(this.db, messages), this.claims);
    let added = 0;
    for (let waited = 0; ; ) {
      const pass = await this.recordFollowing(messages, recordsOf);
      added += pass.added;
      if (pass.overtaken) continue;
      if (pass.waiting === 0) return added;
      if (waited >= WAIT_IN_PLACE_MS) throw new BatchNotReady(`${pass.waiting} events of ${this.consumer} wait for earlier ones`);
      await new Promise((resolve) => setTimeout(resolve, WAIT_STEP_MS));
      waited += WAIT_STEP_MS;
    }
  }

  /**
   * One statement (after reading the position, when not known): records the
   * events that follow the position; `waiting`: how many of the rest do not
   * yet; `overtaken`: another replica moved the position first, and nothing
   * was recorded.
   */
  private async recordFollowing<M extends EventMessage>(messages: readonly M[], recordsOf: RecordsOf<M>): Promise<{ added: number; waiting: number; overtaken: boolean }> {
    const through = this.through ?? (await recordedThrough(this.db, this.consumer));
    this.through = undefined;
    const fresh = messages.filter((m) => m.streamSequence > through);
    const run = this.runAfter(through, fresh);
    const waiting = fresh.length - run.length;
    if (run.length === 0) {
      // A batch wholly recorded before (a redelivery) leaves the position where it was read.
      if (waiting === 0) this.through = through;
      return { added: 0, waiting, overtaken: false };
    }
    const to = run.at(-1)!.streamSequence;
    let recorded: { added: number; advanced: boolean; adopt(committed: boolean): void } | undefined;
    try {
      recorded = await recordWithin(this.db, await recordsOf(this.db, run), this.claims, { consumer: this.consumer, from: through, to });
    } finally {
      recorded?.adopt(recorded.advanced);
    }
    if (!recorded.advanced) return { added: 0, waiting, overtaken: true };
    // Waiting events may be recorded by another replica meanwhile: the position is read again for them.
    if (waiting === 0) this.through = to;
    return { added: recorded.added, waiting, overtaken: false };
  }

  /** The events that directly follow `through`, in order, up to the first that does not; a gap waited on long enough is taken as gone. */
  private runAfter<M extends EventMessage>(through: number, fresh: readonly M[]): readonly M[] {
    let last = through;
    let taken = 0;
    for (const m of fresh) {
      const follows = m.follows ?? m.streamSequence - 1;
      if (follows > last && !(taken === 0 && this.goneBefore(through, m))) break;
      last = m.streamSequence;
      taken += 1;
    }
    if (taken > 0) this.waiting = undefined;
    return fresh.slice(0, taken);
  }

  /** Whether the events between `through` and `next` have been waited on for long enough to be taken as gone. */
  private goneBefore(through: number, next: EventMessage): boolean {
    const now = Date.now();
    if (this.waiting?.through !== through || this.waiting.next !== next.streamSequence) {
      this.waiting = { through, next: next.streamSequence, since: now };
      return false;
    }
    if (now - this.waiting.since < this.goneAfterMs) return false;
    this.logger.warn({ consumer: this.consumer, after: through, resumedAt: next.streamSequence }, "events before the batch never came: taken as gone, recording goes on");
    return true;
  }
}
