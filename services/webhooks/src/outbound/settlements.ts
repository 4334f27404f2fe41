import type { Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import { settleAttempts, type Settlement } from "../db/queries.js";

/** The most outcomes one statement writes. */
const MAX_BATCH = 500;

/**
 * Waits before writing a batch again after the database failed it: about
 * 15 s in all. A delivery whose lease ran out meanwhile may be sent again by
 * another replica, which at least once allows.
 */
const RETRY_WAITS_MS = [250, 500, 1_000, 2_000, 4_000, 8_000];

/**
 * Writes attempts' outcomes as they come, in batches: whatever finished
 * while the previous write ran goes in the next one statement, so the
 * writes keep up with any rate without a timer's delay. A batch the database
 * refuses is tried again for a while, then each of its outcomes once on its
 * own; one still not written leaves its delivery to its lease (sent again:
 * at least once).
 */
export class SettlementWriter {
  private queued: Settlement[] = [];
  private writing: Promise<void> | undefined;

  constructor(
    private readonly db: Knex,
    private readonly logger: Logger,
    /** Called when a written batch let a meeting's next event become due. */
    private readonly unblocked: () => void,
  ) {}

  add(settlement: Settlement): void {
    this.queued.push(settlement);
    this.start();
  }

  private start(): void {
    if (this.writing) return;
    this.writing = this.writeAll().finally(() => {
      this.writing = undefined;
      // Added after the last batch was taken but before this write ended.
      if (this.queued.length > 0) this.start();
    });
  }

  /** Resolves once everything added so far is written (or given up). */
  async drain(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async writeAll(): Promise<void> {
    while (this.queued.length > 0) {
      const batch = this.queued.splice(0, MAX_BATCH);
      if (await this.write(batch)) continue;
      // Whatever one outcome's trouble, it does not cost the others theirs: each is tried once on its own.
      if (batch.length > 1) for (const one of batch) await this.write([one], RETRY_WAITS_MS.length);
    }
  }

  /** Whether the batch was written, trying again after each wait from `failures` on. */
  private async write(batch: Settlement[], failures = 0): Promise<boolean> {
    for (; ; failures++) {
      try {
        if (await settleAttempts(this.db, batch)) this.unblocked();
        return true;
      } catch (err) {
        const wait = RETRY_WAITS_MS[failures];
        if (wait === undefined) {
          this.logger.error({ err, deliveries: batch.length }, "webhook attempts could not be recorded; their leases will bring the deliveries back");
          return false;
        }
        this.logger.warn({ err, deliveries: batch.length }, "webhook attempts not recorded yet; trying again");
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }
}
