import type { Knex } from "@sched/db";
import { randomUUID } from "node:crypto";
import type { Logger } from "@sched/logging";
import type { InviteChannel } from "@sched/proto";
import { extractTraceContext, inSpan, markSpanFailed, recordInviteDelivery, SpanKind } from "@sched/telemetry";
import { activeConnection, type ConnectionRecord } from "../db/connections.js";
import {
  claimDueChanges,
  earlierChannel,
  finishChange,
  nextDueAt,
  noteAttemptFailed,
  pendingDeliveries,
  renewLease,
  scheduleRetry,
  settleDelivery,
  type ClaimedChange,
  type DeliveryRecord,
} from "../db/deliveries.js";
import { DeliveryFailure, isLastAttempt, retryDelayMs } from "../domain/retry.js";
import type { EmailSender } from "./email.js";
import type { GoogleCalendar } from "./google.js";
import { deliverThroughGoogle, NOT_ON_PROVIDER } from "./googleDelivery.js";
import type { ConnectionVault } from "./vault.js";

export interface WorkerSettings {
  maxAttempts: number;
  retryBaseMs: number;
  /** How long a claimed change is this replica's; past it another replica may take it over. */
  leaseMs: number;
  /** Changes delivered side by side. */
  batch: number;
  /** The longest sleep: other replicas' work and expired leases are noticed at least this often. */
  pollMs: number;
}

export interface WorkerDeps {
  db: Knex;
  logger: Logger;
  email: EmailSender;
  google: GoogleCalendar;
  vault: ConnectionVault;
  settings: WorkerSettings;
}

/**
 * Drains the deliveries the event consumer recorded. The consumer only
 * writes rows, so a provider that is down or rate-limits one organizer
 * holds up that organizer's changes (retried with back-off), never the
 * event stream or anyone else's invites.
 */
export class DeliveryWorker {
  /** Names this worker's leases, so it extends only its own. */
  private readonly owner = `worker-${randomUUID()}`;
  private stopped = false;
  private wakeUp: () => void = () => {};
  private running: Promise<void> | undefined;

  constructor(private readonly deps: WorkerDeps) {}

  start(): void {
    this.running ??= this.loop();
  }

  /** New work was recorded: look now rather than at the next poll. */
  wake(): void {
    this.wakeUp();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeUp();
    await this.running;
  }

  private async loop(): Promise<void> {
    const { db, logger, settings } = this.deps;
    while (!this.stopped) {
      let waitMs = settings.pollMs;
      try {
        const claimed = await claimDueChanges(db, this.owner, settings.batch, settings.leaseMs);
        if (claimed.length > 0) {
          await Promise.all(claimed.map((change) => this.deliverInSpan(change)));
          continue;
        }
        const due = await nextDueAt(db);
        if (due) waitMs = Math.max(0, Math.min(waitMs, due.getTime() - Date.now()));
      } catch (err) {
        logger.error({ err }, "invite delivery round failed; trying again shortly");
      }
      await this.sleep(waitMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** The attempt as a span of the trace of the request that made the change. */
  private deliverInSpan(change: ClaimedChange): Promise<void> {
    const attributes = { "sched.meeting.id": change.meetingId, "sched.invites.sequence": change.sequence, "sched.invites.attempt": change.attempts };
    return inSpan("invites.deliver", { kind: SpanKind.INTERNAL, parent: extractTraceContext(change.traceContext), attributes }, async (span) => {
      const outcome = await this.deliver(change);
      span.setAttribute("sched.invites.outcome", outcome);
      if (outcome !== "done") markSpanFailed(span, outcome);
    });
  }

  /** One attempt at one change; whatever happens, the change ends settled or scheduled again. */
  private async deliver(change: ClaimedChange): Promise<"done" | "retrying" | "failed"> {
    const { db, logger } = this.deps;
    let channel: InviteChannel = "email";
    try {
      const rows = await pendingDeliveries(db, change);
      const connection = rows.length > 0 ? await this.googleConnectionFor(change) : undefined;
      if (connection) channel = "google";
      if (!connection || !(await this.tryGoogle(connection, change, rows))) {
        channel = "email";
        await this.deliverByEmail(change, rows);
      }
      if (!(await finishChange(db, change, this.owner, "done"))) throw new LeaseLost();
      return "done";
    } catch (err) {
      if (err instanceof LeaseLost) return this.leaseLost(change);
      const failure = err instanceof DeliveryFailure ? err : new DeliveryFailure("transient", err instanceof Error ? err.message : String(err));
      return this.failed(change, channel, failure).catch((settleErr: unknown) => {
        // The lease runs out and the change is tried again: nothing is lost.
        logger.error({ err: settleErr, meetingId: change.meetingId, sequence: change.sequence }, "could not record a failed invite attempt");
        return "retrying" as const;
      });
    }
  }

  private async failed(change: ClaimedChange, channel: InviteChannel, failure: DeliveryFailure): Promise<"retrying" | "failed"> {
    const { db, logger, settings } = this.deps;
    if (isLastAttempt(failure.kind, change.attempts, settings.maxAttempts)) {
      for (const row of await pendingDeliveries(db, change)) {
        await settleDelivery(db, row, { state: "failed", channel, attempts: change.attempts, error: failure.message });
        recordInviteDelivery("failed", channel);
      }
      if (!(await finishChange(db, change, this.owner, "failed", failure.message))) return this.leaseLost(change);
      logger.error({ meetingId: change.meetingId, sequence: change.sequence, attempts: change.attempts, error: failure.message }, "invites given up");
      return "failed";
    }
    const delay = retryDelayMs(change.attempts, settings.retryBaseMs);
    await noteAttemptFailed(db, change, channel, failure.message);
    if (!(await scheduleRetry(db, change, this.owner, delay, failure.message))) return this.leaseLost(change);
    recordInviteDelivery("retrying", channel);
    logger.warn({ meetingId: change.meetingId, sequence: change.sequence, attempts: change.attempts, delayMs: delay, error: failure.message }, "invite delivery failed; retrying");
    return "retrying";
  }

  private leaseLost(change: ClaimedChange): "retrying" {
    this.deps.logger.warn({ meetingId: change.meetingId, sequence: change.sequence }, "invite lease lost; another replica carries on");
    return "retrying";
  }

  /**
   * Google when the organizer has a working connection and the meeting did
   * not start out by e-mail (a second copy under another UID would reach
   * the participants).
   */
  private async googleConnectionFor(change: ClaimedChange): Promise<ConnectionRecord | undefined> {
    const { db, google } = this.deps;
    if (!google.configured) return undefined;
    const connection = await activeConnection(db, change.organizer.userId);
    return connection && (await earlierChannel(db, change)) !== "email" ? connection : undefined;
  }

  /** True when Google took the change; false when e-mail must carry it (revoked grant, or Google never had the meeting). */
  private async tryGoogle(connection: ConnectionRecord, change: ClaimedChange, rows: DeliveryRecord[]): Promise<boolean> {
    const { db, vault } = this.deps;
    try {
      if ((await deliverThroughGoogle(db, vault, connection, change)) === NOT_ON_PROVIDER) return false;
    } catch (err) {
      if (!(err instanceof DeliveryFailure && err.kind === "revoked")) throw err;
      await vault.markBroken(connection, err.message);
      return false;
    }
    for (const row of rows) {
      await settleDelivery(db, row, { state: "sent", channel: "google", attempts: change.attempts });
      recordInviteDelivery("sent", "google");
    }
    return true;
  }

  /** One message per participant; each sent one is settled at once, so a retry sends only the rest. */
  private async deliverByEmail(change: ClaimedChange, rows: DeliveryRecord[]): Promise<void> {
    const { db, email } = this.deps;
    let retry: DeliveryFailure | undefined;
    for (const row of rows) {
      // A slow relay must not outlast the lease: another replica would then send the same e-mails.
      if (!(await renewLease(db, change, this.owner, this.deps.settings.leaseMs))) throw new LeaseLost();
      try {
        await email.send({ meeting: change.meeting, sequence: change.sequence, kind: row.kind, recipient: row.email, organizerEmail: change.organizer.email });
        await settleDelivery(db, row, { state: "sent", channel: "email", attempts: change.attempts });
        recordInviteDelivery("sent", "email");
      } catch (err) {
        if (!(err instanceof DeliveryFailure)) throw err;
        if (err.kind === "permanent") {
          await settleDelivery(db, row, { state: "failed", channel: "email", attempts: change.attempts, error: err.message });
          recordInviteDelivery("failed", "email");
        } else retry ??= err;
      }
    }
    if (retry) throw retry;
  }
}

/** The change's lease ran out under this worker: it is another replica's now. */
class LeaseLost extends Error {
  constructor() {
    super("the delivery lease ran out");
    this.name = "LeaseLost";
  }
}
