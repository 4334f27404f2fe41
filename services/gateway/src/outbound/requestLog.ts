import type { Bus } from "@sched/bus";
import { randomBase62 } from "@sched/ids";
import type { Logger } from "@sched/logging";
import { MAX_SERVED_PER_BATCH, requestsServed, type ServedRequest } from "@sched/proto";
import { takeBatch } from "../domain/requestBatches.js";

export interface RequestLogSettings {
  /** Most requests in one published batch. */
  maxBatch: number;
  /** How long a request waits at most before its batch goes out. */
  flushEveryMs: number;
  /** Requests kept while the bus does not take them; past this the oldest are dropped. */
  maxBuffered: number;
}

/**
 * Batches as large as the event's contract takes (`requestsServed`): a
 * batch costs a publish and its acknowledgement here, and a delivery, an
 * acknowledgement and a statement in the dashboard, whatever its size. A
 * request still waits at most `flushEveryMs` before it goes out.
 */
const DEFAULT_REQUEST_LOG_SETTINGS: RequestLogSettings = { maxBatch: MAX_SERVED_PER_BATCH, flushEveryMs: 1_000, maxBuffered: 20_000 };

/**
 * Collects the metadata of authenticated requests (never a body or a key) and
 * publishes it in batches to the request-log stream, off the request's path:
 * recording is a push onto an array, and the publishing runs on a timer,
 * armed only while something waits: an idle gateway is not woken every
 * `flushEveryMs` for nothing.
 */
export class RequestLogRecorder {
  private buffer: ServedRequest[] = [];
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly bus: Bus,
    private readonly logger: Logger,
    private readonly settings: RequestLogSettings = DEFAULT_REQUEST_LOG_SETTINGS,
  ) {}

  record(request: ServedRequest): void {
    this.buffer.push(request);
    if (this.buffer.length > this.settings.maxBuffered) this.buffer.splice(0, this.buffer.length - this.settings.maxBuffered);
    if (this.buffer.length >= this.settings.maxBatch) void this.flush();
    else this.arm();
  }

  /** The next round, `flushEveryMs` from now, unless one is already due. */
  private arm(): void {
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.settings.flushEveryMs);
    this.timer.unref();
  }

  /** Publishes what is buffered, one batch after another; a batch the bus refuses goes back to the front for the next round. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      while (this.buffer.length > 0) {
        const { batch, rest } = takeBatch(this.buffer, this.settings.maxBatch);
        this.buffer = rest;
        const batchId = `rlb_${randomBase62(24)}`;
        try {
          await this.bus.publish(requestsServed, { batchId, requests: batch }, { msgId: batchId });
        } catch (err) {
          this.buffer = [...batch, ...this.buffer];
          this.logger.warn({ err, requests: batch.length }, "the request log batch was not published; it is kept for the next round");
          this.arm();
          return;
        }
      }
    });
    return this.flushing;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
