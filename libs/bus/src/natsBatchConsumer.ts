import type { ConsumerMessages, JsMsg } from "@nats-io/jetstream";
import type { EventDef } from "@sched/proto";
import { openDurable, PULL_EXPIRES_MS, reopenAfter, type PullConsumerSetup } from "./natsConsumer.js";
import { headerValues } from "./headerText.js";
import { consumeEvents } from "./observed.js";
import { receivedEventReadingHeaders } from "./receivedEvent.js";
import { retryPauseMs } from "./retryPause.js";
import { BatchNotReady, DEFAULT_BACKOFF_MS, type EventMessageOf, type Stoppable } from "./types.js";

/**
 * A durable pull consumer handing over, in stream order, every event already
 * delivered, up to `maxBatch` (also how many JetStream lets it hold unacknowledged).
 * One long-lived pull fills a queue; the worker takes what is queued. A failed
 * batch is retried as it was, here rather than by redelivery, so no later
 * event overtakes it; meanwhile everything held is kept from redelivery.
 * While the stream is busy (the batch before ended less than `lingerMs`
 * ago), a batch that would start with fewer than `maxBatch` events waits up
 * to `lingerMs` for more (cut short once `maxBatch` are queued, or by
 * stop()): a batch costs a statement, an acknowledgement confirmed and the
 * server's work for both whatever its size, so at a busy time a few
 * milliseconds of waiting buy fewer, larger batches. An event that comes
 * after a quiet spell is handed over at once.
 */
export async function runBatchConsumer<E extends EventDef>(
  setup: PullConsumerSetup<E>,
  maxBatch: number,
  handler: (messages: EventMessageOf<E>[]) => Promise<void>,
  lingerMs = 0,
): Promise<Stoppable> {
  const { logger, consumer: options } = setup;
  const backoff = options.backoffMs ?? DEFAULT_BACKOFF_MS;

  let stopped = false;
  const running = () => !stopped && setup.isOpen();
  const queue: JsMsg[] = [];
  let batch: JsMsg[] = [];
  // The worker waits for an arrival, or out a pause: a back-off, which only stop() cuts short, or a linger, which maxBatch events queued end too.
  let arrived: (() => void) | undefined;
  let interrupt: (() => void) | undefined;
  let lingering = false;
  const rouse = () => {
    arrived?.();
    arrived = undefined;
  };
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(finish, ms);
      function finish() {
        clearTimeout(timer);
        interrupt = undefined;
        resolve();
      }
      interrupt = finish;
    });
  // A slow or failing batch is not a lost one: JetStream must not redeliver what is held.
  const keepAlive = setInterval(() => {
    for (const m of [...batch, ...queue]) m.working();
  }, Math.max(1_000, setup.ackWaitMs / 3));

  let consumer = await openDurable(setup, false, maxBatch);
  let pulling: ConsumerMessages | undefined;
  const pull = async (): Promise<void> => {
    while (running()) {
      try {
        pulling = await consumer.consume({
          expires: PULL_EXPIRES_MS,
          abort_on_missing_resource: true,
          callback: (m) => {
            queue.push(m);
            if (lingering && queue.length >= maxBatch) interrupt?.();
            rouse();
          },
        });
        if (!running()) await pulling.close();
        const ended = await pulling.closed();
        if (running()) throw ended instanceof Error ? ended : new Error("the event pull ended");
      } catch (err) {
        if (running()) consumer = await reopenAfter(err, setup, consumer, maxBatch);
      }
    }
  };

  const handle = async (held: JsMsg[], attempt: number): Promise<void> => {
    // The stream-wide filter also brings the stream's other events: not ours, acknowledged with the batch.
    const ours = held.filter((m) => setup.events.has(m.subject));
    if (ours.length === 0) return;
    const messages = ours.map((m) => {
      const def = setup.events.get(m.subject)!;
      const follows = setup.streamWide ? m.seq - 1 : undefined;
      return receivedEventReadingHeaders(def, m.json(), { deliveryCount: m.info.deliveryCount + attempt - 1, streamSequence: m.seq, follows }, () => headerValues(m.headers));
    });
    await consumeEvents("nats", options.durable, messages, handler);
  };

  const work = async (): Promise<void> => {
    let attempt = 0;
    let lingered = false;
    let lastEnded = -Infinity;
    while (running()) {
      if (batch.length === 0) {
        const busy = performance.now() - lastEnded < lingerMs;
        if (busy && !lingered && queue.length > 0 && queue.length < maxBatch) {
          lingered = true;
          lingering = true;
          await pause(lingerMs);
          lingering = false;
          continue;
        }
        lingered = false;
        batch = queue.splice(0, maxBatch);
      }
      if (batch.length === 0) {
        await new Promise<void>((resolve) => (arrived = resolve));
        continue;
      }
      attempt += 1;
      try {
        await handle(batch, attempt);
      } catch (err) {
        if (!running()) break;
        if (err instanceof BatchNotReady) logger.debug({ reason: err.message, events: batch.length, attempt, durable: options.durable }, "event batch waits for earlier events");
        else logger.warn({ err, events: batch.length, attempt, durable: options.durable }, "event batch handler failed; retrying it");
        await pause(retryPauseMs(err, attempt, backoff));
        batch = withEarlierArrivals(batch, queue, maxBatch);
        continue;
      }
      // One write carries every acknowledgement; the last is confirmed, and with it those before.
      const last = batch.at(-1)!;
      for (const m of batch.slice(0, -1)) m.ack();
      // Handed over before the confirmation: neither the keep-alive nor stop() touches an acknowledged event.
      batch = [];
      attempt = 0;
      await setup.confirmAck(last).catch((err: unknown) => {
        logger.warn({ err, durable: options.durable }, "event acknowledgement not confirmed; the batch may be delivered again");
      });
      lastEnded = performance.now();
    }
    // Stopped: whatever is held and not handled goes straight back, for whoever consumes next.
    for (const m of [...batch, ...queue.splice(0)]) m.nak();
    batch = [];
  };

  const pulled = pull();
  const worked = work();
  return {
    stop: async () => {
      stopped = true;
      // The pull ends first, so nothing new arrives while the batch in hand finishes.
      void pulling?.close();
      rouse();
      interrupt?.();
      await worked;
      clearInterval(keepAlive);
      await pulled;
    },
  };
}

/**
 * The batch to retry: as it was, unless events before its first arrived
 * meanwhile (redelivered, once another consumer of the durable left them
 * unacknowledged): then the held events' first `maxBatch` in stream order, the
 * rest queued again. A batch waiting for earlier events would otherwise wait
 * for the very events queued behind it.
 */
function withEarlierArrivals(batch: JsMsg[], queue: JsMsg[], maxBatch: number): JsMsg[] {
  const first = batch[0]?.seq ?? 0;
  if (!queue.some((m) => m.seq < first)) return batch;
  const held = [...batch, ...queue.splice(0)].sort((a, b) => a.seq - b.seq);
  queue.push(...held.slice(maxBatch));
  return held.slice(0, maxBatch);
}
