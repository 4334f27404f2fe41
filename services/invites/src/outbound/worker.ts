import type { Knex } from "@sched/db";
import { randomUUID } from "node:crypto";
import { setTimeout as pause } from "node:timers/promises";
import type { Logger } from "@sched/logging";
import type { InviteChannel } from "@sched/proto";
import { extractTraceContext, inSpan, markSpanFailed, recordInviteDelivery, SpanKind } from "@sched/telemetry";
import { activeConnection, awaitSendInFlight, beginSending, claimDueChanges, type ClaimedChange, type ConnectionRecord, defaultConnection, earlierChannel, finishChange, holdInDoubt, nextDueAt, pendingDeliveries, type PendingDelivery, renewLease, saveProviderEvent, scheduleRetry, settleDeliveries, settleUnsent } from "../db/queries.js";
import { asDeliveryFailure, DeliveryFailure, isLastAttempt, retryDelayMs } from "../domain/retry.js";
import type { EmailSender } from "./email.js";
import type { GoogleCalendar } from "./google.js";
import { deliverThroughCalDav } from "./caldavDelivery.js";
import { deliverThroughGoogle, NOT_ON_PROVIDER } from "./googleDelivery.js";
import type { MicrosoftCalendar } from "./microsoft.js";
import { deliverThroughMicrosoft } from "./microsoftDelivery.js";
import { LeaseHeartbeat } from "./leaseHeartbeat.js";
import type { ConnectionVault } from "./vault.js";

export interface WorkerSettings {
  maxAttempts: number;
  retryBaseMs: number;
  /** How long a claimed change is this replica's; renewed while it delivers; past it another replica may take it over. */
  leaseMs: number;
  /** The domain of iCalendar UIDs, for events put in CalDAV calendars. */
  uidDomain: string;
  /** How long a CalDAV server may take to answer one request. */
  providerTimeoutMs: number;
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
  /** Absent where Microsoft Graph is not set up: Microsoft connections are then passed over for e-mail. */
  microsoft?: MicrosoftCalendar;
  vault: ConnectionVault;
  settings: WorkerSettings;
  /** Outcomes were recorded, and with them their events in the outbox: publish them now rather than at the relay's next poll. */
  settled?: () => void;
}

/**
 * Drains the deliveries the event consumer recorded. The consumer only
 * writes rows, so a provider that is down or rate-limits one organizer
 * holds up that organizer's changes (retried with back-off), never the
 * event stream or anyone else's invites.
 *
 * Each invite is handed to the provider once: it is marked as being sent
 * (committed) before the call, and what the provider answered is recorded
 * however long the database takes to come back. A delivery another attempt
 * marked is left to that attempt, until the mark is so old that its worker
 * must have died (SENDING_PRESUMED_LOST_SECONDS): then it is sent again, as
 * a duplicate is better than an invite never sent.
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
      if (outcome === "retrying" || outcome === "failed") markSpanFailed(span, outcome);
    });
  }

  /**
   * One attempt at one change; whatever happens, the change ends settled,
   * scheduled again, or waiting for another attempt's send. The lease is
   * renewed all along, so a slow send does not outlast it.
   */
  private async deliver(change: ClaimedChange): Promise<"done" | "waiting" | "retrying" | "failed"> {
    const { db, logger, settings } = this.deps;
    const attempt = randomUUID();
    const heartbeat = new LeaseHeartbeat(
      () => renewLease(db, change, this.owner, settings.leaseMs),
      settings.leaseMs / 3,
      (err) => logger.warn({ err, meetingId: change.meetingId, sequence: change.sequence }, "could not renew an invite lease; trying again"),
    );
    let channel: InviteChannel = "email";
    try {
      const rows = await pendingDeliveries(db, change);
      if (rows.some((row) => row.sendingAttempt !== null && !row.sendingPresumedLost)) return await this.waitForOtherAttempt(change);
      const connection = rows.length > 0 ? await this.providerConnectionFor(change) : undefined;
      if (connection) channel = connection.provider;
      const tried = connection ? await this.tryProvider(connection, change, rows, attempt) : { taken: false as const };
      if (!tried.taken) {
        channel = "email";
        if (tried.reason) logger.info({ meetingId: change.meetingId, sequence: change.sequence, provider: connection?.provider, reason: tried.reason }, "invites go by e-mail: the calendar cannot carry the meeting");
        await this.deliverByEmail(change, connection ? await pendingDeliveries(db, change) : rows, attempt, tried.reason);
      }
      if (!(await finishChange(db, change, this.owner, "done"))) throw new LeaseLost();
      return "done";
    } catch (err) {
      if (err instanceof LeaseLost) return this.leaseLost(change);
      // Everything else of the change is settled; the send in doubt is waited on as another attempt's would be.
      if (err instanceof DeliveryFailure && err.kind === "in-doubt") return await this.waitForOtherAttempt(change);
      return this.failed(change, attempt, channel, asDeliveryFailure(err)).catch((settleErr: unknown) => {
        // The lease runs out and the change is tried again: nothing is lost.
        logger.error({ err: settleErr, meetingId: change.meetingId, sequence: change.sequence }, "could not record a failed invite attempt");
        return "retrying" as const;
      });
    } finally {
      heartbeat.stop();
    }
  }

  /** What this attempt did not send is given up after the last try, or waits for the next. */
  private async failed(change: ClaimedChange, attempt: string, channel: InviteChannel, failure: DeliveryFailure): Promise<"retrying" | "failed"> {
    const { db, logger, settings } = this.deps;
    const outcome = { channel, attempts: change.attempts, error: failure.message };
    if (isLastAttempt(failure.kind, change.attempts, settings.maxAttempts)) {
      const given = await settleUnsent(db, change, attempt, { ...outcome, state: "failed" });
      if (given > 0) this.deps.settled?.();
      for (let i = 0; i < given; i++) recordInviteDelivery("failed", channel);
      if (!(await finishChange(db, change, this.owner, "failed", failure.message))) return this.leaseLost(change);
      logger.error({ meetingId: change.meetingId, sequence: change.sequence, attempts: change.attempts, error: failure.message }, "invites given up");
      return "failed";
    }
    const delay = retryDelayMs(change.attempts, settings.retryBaseMs);
    await settleUnsent(db, change, attempt, { ...outcome, state: "pending" });
    if (!(await scheduleRetry(db, change, this.owner, delay, failure.message))) return this.leaseLost(change);
    recordInviteDelivery("retrying", channel);
    logger.warn({ meetingId: change.meetingId, sequence: change.sequence, attempts: change.attempts, delayMs: delay, error: failure.message }, "invite delivery failed; retrying");
    return "retrying";
  }

  /**
   * Another attempt (a worker whose lease ran out) may have handed some of
   * the change's deliveries to the provider: that attempt records what the
   * provider said, so nothing is sent now; the change comes back later.
   */
  private async waitForOtherAttempt(change: ClaimedChange): Promise<"waiting" | "retrying"> {
    const { db, logger, settings } = this.deps;
    if (!(await awaitSendInFlight(db, change, this.owner, settings.leaseMs))) return this.leaseLost(change);
    logger.info({ meetingId: change.meetingId, sequence: change.sequence }, "invites being sent by another attempt; waiting for its outcome");
    return "waiting";
  }

  private leaseLost(change: ClaimedChange): "retrying" {
    this.deps.logger.warn({ meetingId: change.meetingId, sequence: change.sequence }, "invite lease lost; another replica carries on");
    return "retrying";
  }

  /**
   * Records what a provider did with a send, retrying the statement (never
   * the send) until the database takes it or the process ends: an invite
   * the provider accepted is not sent again because a database was
   * restarting when it went out.
   */
  private async store(change: ClaimedChange, write: () => Promise<unknown>): Promise<void> {
    const { logger } = this.deps;
    for (let tries = 1; ; tries++) {
      try {
        await write();
        if (tries > 1) logger.info({ meetingId: change.meetingId, sequence: change.sequence, tries }, "invite outcome recorded");
        return;
      } catch (err) {
        if (tries === 1) logger.error({ err, meetingId: change.meetingId, sequence: change.sequence }, "could not record an invite outcome; retrying until it is stored");
        await pause(Math.min(STORE_RETRY_MAX_MS, 50 * 2 ** tries));
      }
    }
  }

  /**
   * The organizer's default connection, else their Google one, else their
   * Microsoft one, when it works and the meeting did not start out by
   * e-mail (a second copy under another UID would reach the participants).
   */
  private async providerConnectionFor(change: ClaimedChange): Promise<ConnectionRecord | undefined> {
    const { db, google } = this.deps;
    const microsoftConfigured = this.deps.microsoft?.configured ?? false;
    const chosen = await defaultConnection(db, change.organizer.userId);
    const connection =
      chosen ??
      (google.configured ? await activeConnection(db, change.organizer.userId) : undefined) ??
      (microsoftConfigured ? await activeConnection(db, change.organizer.userId, "microsoft") : undefined);
    if (!connection || (connection.provider === "google" && !google.configured) || (connection.provider === "microsoft" && !microsoftConfigured)) return undefined;
    return (await earlierChannel(db, change)) !== "email" ? connection : undefined;
  }

  private deliverThrough(connection: ConnectionRecord, change: ClaimedChange) {
    const { db, vault, settings } = this.deps;
    if (connection.provider === "caldav") return deliverThroughCalDav(db, vault, connection, change, { uidDomain: settings.uidDomain, timeoutMs: settings.providerTimeoutMs });
    if (connection.provider === "microsoft") return deliverThroughMicrosoft(db, vault, connection, change);
    return deliverThroughGoogle(db, vault, connection, change);
  }

  /**
   * Whether the provider took the change; not taken when e-mail must carry
   * it (revoked grant, the provider never had the meeting, or, with the
   * reason, one it cannot carry). One call carries every delivery of the
   * change, so all are marked as being sent before it.
   */
  private async tryProvider(connection: ConnectionRecord, change: ClaimedChange, rows: PendingDelivery[], attempt: string): Promise<{ taken: true } | { taken: false; reason?: string }> {
    const { db, vault, settings } = this.deps;
    const channel = connection.provider;
    if (!(await beginSending(db, change, this.owner, settings.leaseMs, rows, attempt)).leased) throw new LeaseLost();
    const notTaken = (error?: string) => this.store(change, () => settleDeliveries(db, change, rows, { state: "pending", channel, attempts: change.attempts, error }, attempt));
    let result: Awaited<ReturnType<typeof deliverThroughMicrosoft>>;
    try {
      result = await this.deliverThrough(connection, change);
    } catch (err) {
      const failure = asDeliveryFailure(err);
      await notTaken(failure.message);
      if (failure.kind !== "revoked") throw failure;
      await vault.markBroken(connection, failure.message);
      return { taken: false };
    }
    if (result === NOT_ON_PROVIDER) {
      await notTaken();
      return { taken: false };
    }
    if (typeof result === "object" && "byEmail" in result) {
      await notTaken();
      return { taken: false, reason: result.byEmail };
    }
    const inserted = typeof result === "object" ? result.inserted : undefined;
    await this.store(change, async () => {
      if (inserted) await saveProviderEvent(db, change.meetingId, connection.id, inserted);
      await settleDeliveries(db, change, rows, { state: "sent", channel, attempts: change.attempts }, attempt);
    });
    this.deps.settled?.();
    for (let i = 0; i < rows.length; i++) recordInviteDelivery("sent", channel);
    return { taken: true };
  }

  /**
   * One message per participant, each marked as being sent before it goes
   * and settled as soon as the relay answers, so a retry sends only the rest.
   * `fallbackReason`: why the organizer's calendar did not carry them, kept with each.
   */
  private async deliverByEmail(change: ClaimedChange, rows: PendingDelivery[], attempt: string, fallbackReason?: string): Promise<void> {
    const { db, email, settings } = this.deps;
    let retry: DeliveryFailure | undefined;
    let doubted: DeliveryFailure | undefined;
    for (const row of rows) {
      const { leased, marked } = await beginSending(db, change, this.owner, settings.leaseMs, [row], attempt);
      if (!leased) throw new LeaseLost();
      // The attempt that marked it before recorded it meanwhile.
      if (marked === 0) continue;
      let failure: DeliveryFailure | undefined;
      try {
        await email.send({ meeting: change.meeting, series: change.series, sequence: change.sequence, kind: row.kind, recipient: row.email, organizerEmail: change.organizer.email });
      } catch (err) {
        failure = asDeliveryFailure(err);
      }
      if (failure?.kind === "in-doubt") {
        // Left marked as being sent: like a send whose worker died, it goes again only once presumed lost.
        await this.store(change, () => holdInDoubt(db, row, attempt, failure.message));
        doubted ??= failure;
        continue;
      }
      const state = !failure ? "sent" : failure.kind === "permanent" ? "failed" : "pending";
      await this.store(change, () => settleDeliveries(db, change, [row], { state, channel: "email", attempts: change.attempts, error: failure?.message, fallbackReason }, attempt));
      if (state === "pending") retry ??= failure;
      else {
        recordInviteDelivery(state, "email");
        this.deps.settled?.();
      }
    }
    if (retry) throw retry;
    if (doubted) throw doubted;
  }
}

/** The longest wait between two tries at recording an outcome. */
const STORE_RETRY_MAX_MS = 2_000;

/** The change's lease ran out under this worker: it is another replica's now. */
class LeaseLost extends Error {
  constructor() {
    super("the delivery lease ran out");
    this.name = "LeaseLost";
  }
}
