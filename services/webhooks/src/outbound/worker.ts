import type { Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import { claimDue, LAST_SUCCESS_GRAIN_MS, lastSuccessAt, purgeOldEvents, releaseClaims, type ClaimedDelivery, type RecordingRoom, type Settlement } from "../db/queries.js";
import type { RecordingClaims } from "../consumers/recording.js";
import { disablesEndpoint, isDelivered, nextAttemptAt, type RetryPolicy } from "../domain/retry.js";
import type { SecretCipher } from "../domain/secretCipher.js";
import { postJson } from "./post.js";
import { SettlementWriter } from "./settlements.js";
import { DeliverySigner } from "./signer.js";
import { WakeableSleep } from "./wakeableSleep.js";

const PURGE_EVERY_MS = 3_600_000;
const PURGE_BATCH = 1_000;

/**
 * How many deliveries of an endpoint (and in all) are claimed ahead of being
 * sent, as a multiple of what may be in flight: the next ones are at hand the
 * moment a slot frees, without waiting for a claim. Twice, so a claimed
 * delivery waits for a slot at most one timeout, and its lease (three
 * timeouts) outlasts the wait and its own attempt.
 */
const CLAIM_AHEAD = 2;

/**
 * A claimed delivery not started within this many timeouts of its claim is
 * given back rather than sent: its attempt (at most one timeout) and the
 * writing of its outcome then still end within its lease of three.
 */
const SEND_WITHIN_TIMEOUTS = 1.5;

export interface WorkerSettings {
  retry: RetryPolicy;
  /** A receiver answers within this, or the attempt fails (api-decisions part 12: 10 s). */
  timeoutMs: number;
  allowPrivate: boolean;
  /** Most deliveries in flight at once in this replica. */
  concurrency: number;
  /** Most deliveries of one endpoint in flight at once: a slow receiver holds only these. */
  perEndpoint: number;
  /** The longest sleep: other replicas' work, retries and expired leases are noticed at least this often. */
  pollMs: number;
}

/** A claimed delivery waiting for a slot, and until when it may still be sent under its lease. */
interface Waiting {
  delivery: ClaimedDelivery;
  sendBy: number;
}

/**
 * Sends the deliveries the event consumer queued. Each is sent on its own,
 * without waiting for the others, at most `perEndpoint` of one endpoint and
 * `concurrency` in all at once: a receiver that never answers occupies only
 * its own slots for `timeoutMs`, and every other endpoint's deliveries go on.
 * Deliveries are claimed in batches, a few ahead of the free slots, in one
 * statement; the outcomes are written in batches too (one statement for all
 * that finished while the previous write ran). The lease outlives the wait
 * and the attempt, so a replica that dies mid-attempt leaves the delivery to
 * be tried again (at least once; the same `webhook-id` lets the receiver drop
 * the repeat); a delivery is settled (and its meeting's next event becomes
 * due) only once its outcome is written.
 */
export class DeliveryWorker implements RecordingClaims {
  private stopped = false;
  private readonly rest = new WakeableSleep();
  /** Whether the last claim may have left due deliveries behind (it took all it could): a freed slot then claims again. */
  private moreDue = false;
  private running: Promise<void> | undefined;
  /** Claimed and not yet sent, in the order claimed. */
  private waiting: Waiting[] = [];
  /** Claimed and not yet finished (waiting or in flight), by endpoint. */
  private readonly held = new Map<string, number>();
  /** In flight, by endpoint. */
  private readonly inFlight = new Map<string, number>();
  private readonly sending = new Set<Promise<void>>();
  private readonly signer: DeliverySigner;
  private readonly settlements: SettlementWriter;
  private lastPurge = 0;

  constructor(
    private readonly db: Knex,
    cipher: SecretCipher,
    private readonly logger: Logger,
    private readonly settings: WorkerSettings,
  ) {
    this.signer = new DeliverySigner(cipher);
    // Settled deliveries may make their meetings' next events due.
    this.settlements = new SettlementWriter(db, logger, () => this.wake());
  }

  start(): void {
    this.running ??= this.loop();
  }

  /** New deliveries were queued, or some settled: look now rather than at the next poll. */
  wake(): void {
    this.rest.wake();
  }

  /**
   * Holds this worker's room for a batch being recorded, so that the
   * recording statement claims the batch's deliveries itself (their pending
   * rows written once, already leased) and no claim of the loop's takes the
   * same room meanwhile.
   */
  reserve(owed: ReadonlyMap<string, number>): RecordingRoom {
    const { settings } = this;
    const free = new Map<string, number>();
    let total = CLAIM_AHEAD * settings.concurrency - [...this.held.values()].reduce((a, b) => a + b, 0);
    for (const [endpoint, n] of owed) {
      const room = this.stopped ? 0 : Math.min(n, CLAIM_AHEAD * settings.perEndpoint - (this.held.get(endpoint) ?? 0), total);
      if (room <= 0) continue;
      free.set(endpoint, room);
      this.held.set(endpoint, (this.held.get(endpoint) ?? 0) + room);
      total -= room;
    }
    return { free, leaseMs: settings.timeoutMs * 3 };
  }

  /** Takes what a recording claimed in the room it held (see reserve); deliveries left behind are claimed next, at once. */
  adopt(room: RecordingRoom, claimed: readonly ClaimedDelivery[], leftBehind: boolean): void {
    for (const [endpoint, n] of room.free) for (let i = 0; i < n; i++) this.release(endpoint);
    if (this.stopped) {
      // Stopped meanwhile: handed back like any claim not sent.
      void releaseClaims(this.db, claimed).catch((err: unknown) => this.logger.warn({ err }, "claimed webhook deliveries not released; their leases will run out"));
      return;
    }
    const sendBy = Date.now() + this.settings.timeoutMs * SEND_WITHIN_TIMEOUTS;
    for (const delivery of claimed) {
      this.held.set(delivery.endpoint.id, (this.held.get(delivery.endpoint.id) ?? 0) + 1);
      this.waiting.push({ delivery, sendBy });
    }
    this.pump();
    if (leftBehind) {
      this.moreDue = true;
      this.wake();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.rest.wake();
    await this.running;
    const unsent = this.waiting.map((w) => w.delivery);
    this.waiting = [];
    await Promise.all(this.sending);
    await this.settlements.drain();
    // Another replica may take them now rather than when their leases run out.
    await releaseClaims(this.db, unsent).catch((err: unknown) => this.logger.warn({ err }, "claimed webhook deliveries not released; their leases will run out"));
  }

  private async loop(): Promise<void> {
    const { settings } = this;
    while (!this.stopped) {
      try {
        await this.purgeHourly();
        const total = [...this.held.values()].reduce((a, b) => a + b, 0);
        const limit = CLAIM_AHEAD * settings.concurrency - total;
        if (limit > 0) {
          const perEndpoint = CLAIM_AHEAD * settings.perEndpoint;
          const claimed = await claimDue(this.db, { limit, perEndpoint, held: this.held, leaseMs: settings.timeoutMs * 3 });
          const sendBy = Date.now() + settings.timeoutMs * SEND_WITHIN_TIMEOUTS;
          for (const delivery of claimed) {
            const endpoint = delivery.endpoint.id;
            this.held.set(endpoint, (this.held.get(endpoint) ?? 0) + 1);
            this.waiting.push({ delivery, sendBy });
          }
          // Deliveries left behind for want of room: a freed slot claims again rather than waiting for the poll.
          this.moreDue = claimed.length === limit || [...this.held.values()].some((n) => n >= perEndpoint);
          this.pump();
          if (this.moreDue && claimed.length > 0) continue;
        } else {
          this.moreDue = true;
        }
      } catch (err) {
        this.logger.error({ err }, "webhook delivery round failed; trying again shortly");
      }
      await this.rest.sleep(settings.pollMs);
    }
  }

  /** Starts every waiting delivery that has a slot, oldest claim first. */
  private pump(): void {
    const { settings } = this;
    const now = Date.now();
    const still: Waiting[] = [];
    const late: ClaimedDelivery[] = [];
    for (const entry of this.waiting) {
      const endpoint = entry.delivery.endpoint.id;
      if (entry.sendBy < now) {
        // Its lease might run out mid-attempt: given back to the next claim, here or in another replica.
        this.release(endpoint);
        late.push(entry.delivery);
      } else if (this.sending.size < settings.concurrency && (this.inFlight.get(endpoint) ?? 0) < settings.perEndpoint) {
        this.launch(entry.delivery);
      } else {
        still.push(entry);
      }
    }
    this.waiting = still;
    if (late.length > 0) void releaseClaims(this.db, late).catch((err: unknown) => this.logger.warn({ err }, "late webhook deliveries not released; their leases will run out"));
  }

  private launch(delivery: ClaimedDelivery): void {
    const endpoint = delivery.endpoint.id;
    this.inFlight.set(endpoint, (this.inFlight.get(endpoint) ?? 0) + 1);
    const sent = this.attempt(delivery)
      .then((settlement) => this.settlements.add(settlement))
      .catch((err: unknown) => this.logger.error({ err, delivery: delivery.id }, "webhook delivery could not be settled; the lease will bring it back"))
      .finally(() => {
        decrement(this.inFlight, endpoint);
        this.release(endpoint);
        this.sending.delete(sent);
        if (!this.stopped) this.pump();
        // The freed room may be claimed at once: the loop's next claim takes every slot freed since its last one.
        if (this.moreDue) this.wake();
      });
    this.sending.add(sent);
  }

  private release(endpoint: string): void {
    decrement(this.held, endpoint);
  }

  private async attempt(delivery: ClaimedDelivery): Promise<Settlement> {
    const at = new Date();
    const { endpoint } = delivery;
    const headers = this.signer.sign(endpoint, delivery.eventId, delivery.body, at);
    const result = await postJson(new URL(endpoint.url), delivery.body, headers, { timeoutMs: this.settings.timeoutMs, allowPrivate: this.settings.allowPrivate });
    const attempt = delivery.attempts + 1;
    const settled = { seq: delivery.seq, endpointId: endpoint.id, attempt, outcome: { at, ...result } };
    if (isDelivered(result.status)) return { ...settled, next: { state: "delivered" } };
    const due = nextAttemptAt(attempt, delivery.createdAt.getTime(), Date.now(), this.settings.retry);
    if (due !== null) return { ...settled, next: { state: "pending", nextAttemptAt: new Date(due) } };
    const disable = disablesEndpoint((await lastSuccessAt(this.db, endpoint.id))?.getTime() ?? null, delivery.createdAt.getTime(), LAST_SUCCESS_GRAIN_MS);
    if (disable) this.logger.warn({ endpoint: endpoint.id }, "webhook endpoint disabled: every delivery failed for the whole retry window");
    return { ...settled, next: { state: "failed", disable } };
  }

  /** Events older than the list shows are deleted about once an hour, by whichever replica gets there. */
  private async purgeHourly(): Promise<void> {
    if (Date.now() - this.lastPurge < PURGE_EVERY_MS) return;
    this.lastPurge = Date.now();
    let purged = 0;
    for (;;) {
      const batch = await purgeOldEvents(this.db, PURGE_BATCH);
      purged += batch;
      if (batch < PURGE_BATCH || this.stopped) break;
    }
    if (purged > 0) this.logger.info({ purged }, "events older than 30 days deleted");
  }
}

function decrement(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left <= 0) counts.delete(key);
  else counts.set(key, left);
}
