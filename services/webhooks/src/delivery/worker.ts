import type { Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import { claimDue, endpointsByIds, lastSuccessAt, purgeOldEvents, settleAttempt, type AttemptOutcome, type ClaimedDelivery, type EndpointRecord } from "../db/queries.js";
import { disablesEndpoint, isDelivered, nextAttemptAt, type RetryPolicy } from "../domain/retry.js";
import type { SecretCipher } from "../domain/secretCipher.js";
import { postJson } from "./post.js";
import { signDelivery } from "./signer.js";

const PURGE_EVERY_MS = 3_600_000;
const PURGE_BATCH = 1_000;

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

/**
 * Sends the deliveries the event consumer queued. Each is sent on its own,
 * without waiting for the others: the loop claims more as soon as a slot
 * frees, so a receiver that never answers occupies at most `perEndpoint`
 * slots for `timeoutMs`, and every other endpoint's deliveries go on. The
 * lease outlives the attempt, so a replica that dies mid-attempt leaves the
 * delivery to be tried again (at least once; the same `webhook-id` lets the
 * receiver drop the repeat).
 */
export class DeliveryWorker {
  private stopped = false;
  private wakeUp: () => void = () => {};
  /** Set by a wake that came while the loop was not asleep: its next sleep is skipped. */
  private woken = false;
  private running: Promise<void> | undefined;
  private readonly inFlight = new Map<string, number>();
  private readonly sending = new Set<Promise<void>>();
  private lastPurge = 0;

  constructor(
    private readonly db: Knex,
    private readonly cipher: SecretCipher,
    private readonly logger: Logger,
    private readonly settings: WorkerSettings,
  ) {}

  start(): void {
    this.running ??= this.loop();
  }

  /** New deliveries were queued, or a slot freed: look now rather than at the next poll. */
  wake(): void {
    this.woken = true;
    this.wakeUp();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeUp();
    await this.running;
    await Promise.all(this.sending);
  }

  private async loop(): Promise<void> {
    const { settings } = this;
    while (!this.stopped) {
      try {
        await this.purgeHourly();
        const free = settings.concurrency - this.sending.size;
        if (free > 0) {
          const busy = [...this.inFlight].filter(([, n]) => n >= settings.perEndpoint).map(([id]) => id);
          const claimed = await claimDue(this.db, { limit: free, perEndpoint: settings.perEndpoint, busy, leaseMs: settings.timeoutMs * 3 });
          if (claimed.length > 0) {
            const endpoints = await endpointsByIds(this.db, [...new Set(claimed.map((c) => c.endpointId))]);
            for (const delivery of claimed) this.launch(delivery, endpoints);
            continue;
          }
        }
      } catch (err) {
        this.logger.error({ err }, "webhook delivery round failed; trying again shortly");
      }
      await this.sleep(settings.pollMs);
    }
  }

  private launch(delivery: ClaimedDelivery, endpoints: Map<string, EndpointRecord>): void {
    const endpoint = endpoints.get(delivery.endpointId);
    if (!endpoint) return;
    this.inFlight.set(endpoint.id, (this.inFlight.get(endpoint.id) ?? 0) + 1);
    const sent = this.attempt(delivery, endpoint)
      .catch((err: unknown) => this.logger.error({ err, delivery: delivery.id }, "webhook delivery could not be recorded; the lease will bring it back"))
      .finally(() => {
        const left = (this.inFlight.get(endpoint.id) ?? 1) - 1;
        if (left === 0) this.inFlight.delete(endpoint.id);
        else this.inFlight.set(endpoint.id, left);
        this.sending.delete(sent);
        this.wake();
      });
    this.sending.add(sent);
  }

  private async attempt(delivery: ClaimedDelivery, endpoint: EndpointRecord): Promise<void> {
    const at = new Date();
    const body = JSON.stringify(delivery.event);
    const headers = signDelivery(this.cipher, endpoint, delivery.event.id, body, at);
    const result = await postJson(new URL(endpoint.url), body, headers, { timeoutMs: this.settings.timeoutMs, allowPrivate: this.settings.allowPrivate });
    const outcome: AttemptOutcome = { at, ...result };
    const attempt = delivery.attempts + 1;
    const ref = { seq: delivery.seq, endpointId: endpoint.id, attempt };
    if (isDelivered(result.status)) return settleAttempt(this.db, ref, outcome, { state: "delivered" });
    const due = nextAttemptAt(attempt, delivery.createdAt.getTime(), Date.now(), this.settings.retry);
    if (due !== null) return settleAttempt(this.db, ref, outcome, { state: "pending", nextAttemptAt: new Date(due) });
    const disable = disablesEndpoint((await lastSuccessAt(this.db, endpoint.id))?.getTime() ?? null, delivery.createdAt.getTime());
    if (disable) this.logger.warn({ endpoint: endpoint.id }, "webhook endpoint disabled: every delivery failed for the whole retry window");
    return settleAttempt(this.db, ref, outcome, { state: "failed", disable });
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

  private sleep(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wakeUp = () => {
        this.woken = false;
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
