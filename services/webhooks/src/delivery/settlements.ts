import type { Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import { settleAttempts, type Settlement } from "../db/queries.js";

/** The most outcomes one statement writes. */
const MAX_BATCH = 500;

/** Waits before writing a batch again after the database failed it: about 15 s in all, well within the deliveries' leases. */
const RETRY_WAITS_MS = [250, 500, 1_000, 2_000, 4_000, 8_000];

/**
 * Writes attempts' outcomes as they come, in batches: whatever finished
 * while the previous write ran goes in the next one statement, so the
 * writes keep up with any rate without a timer's delay. A batch the database
 * refuses is tried again for a while; past that its deliveries are left to
 * their leases (sent again: at least once).
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
    this.writing ??= this.writeAll().finally(() => (this.writing = undefined));
  }

  /** Resolves once everything added so far is written (or given up). */
  async drain(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async writeAll(): Promise<void> {
    while (this.queued.length > 0) {
      const batch = this.queued.splice(0, MAX_BATCH);
      for (let failures = 0; ; failures++) {
        try {
          if (await settleAttempts(this.db, batch)) this.unblocked();
          break;
        } catch (err) {
          const wait = RETRY_WAITS_MS[failures];
          if (wait === undefined) {
            this.logger.error({ err, deliveries: batch.length }, "webhook attempts could not be recorded; their leases will bring the deliveries back");
            break;
          }
          this.logger.warn({ err, deliveries: batch.length }, "webhook attempts not recorded yet; trying again");
          await new Promise((resolve) => setTimeout(resolve, wait));
        }
      }
    }
  }
}
