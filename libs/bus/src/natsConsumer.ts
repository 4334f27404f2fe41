import type { Logger } from "@sched/logging";
import type { EventDef } from "@sched/proto";
import { nanos } from "@nats-io/nats-core";
import { AckPolicy, DeliverPolicy, type Consumer, type ConsumerMessages, type JetStreamClient, type JetStreamManager, type JsMsg } from "@nats-io/jetstream";
import { headerValues } from "./headerText.js";
import { consumeEvent } from "./observed.js";
import { receivedEventReadingHeaders } from "./receivedEvent.js";
import { retryPauseMs } from "./retryPause.js";
import { DEFAULT_BACKOFF_MS, type ConsumerOptions, type EventMessageOf, type Stoppable } from "./types.js";

export interface PullConsumerSetup<E extends EventDef = EventDef> {
  jsm: JetStreamManager;
  js: JetStreamClient;
  logger: Logger;
  /** Resolves to the stream's name once it exists; `fresh` looks again instead of trusting a cache. */
  ensureStream(fresh: boolean): Promise<string>;
  filter: string;
  /** The filter takes the whole stream: the consumer is handed every sequence of it, each event following the one before. */
  streamWide: boolean;
  /** Event definitions by their full (namespaced) subject. */
  events: ReadonlyMap<string, E>;
  consumer: ConsumerOptions<E>;
  ackWaitMs: number;
  /**
   * Acknowledges a delivered event and resolves once JetStream confirms it:
   * JsMsg.ackAck, sent as our own requests are, without the client's
   * per-request time-out, answer object and "cancelled" error.
   */
  confirmAck(m: JsMsg): Promise<void>;
  isOpen(): boolean;
}

const RETRY_PULL_MS = 1_000;

/**
 * How long one pull request stays open on the server (the client renews it).
 * A stopped consumer's request outlives it by up to this much (nats-server
 * 2.9 keeps it though no one listens), and an event the server hands to it
 * meanwhile is delivered again only once the acknowledgement wait runs out:
 * so short, the client's minimum.
 */
export const PULL_EXPIRES_MS = 1_000;

/** Creates the durable consumer, or brings an existing one to these settings, and returns it. */
export async function openDurable(setup: PullConsumerSetup, fresh: boolean, maxAckPending: number): Promise<Consumer> {
  const { durable, maxDeliver = 0 } = setup.consumer;
  const streamName = await setup.ensureStream(fresh);
  const settings = {
    filter_subject: setup.filter,
    max_deliver: maxDeliver > 0 ? maxDeliver : -1,
    ack_wait: nanos(setup.ackWaitMs),
    max_ack_pending: maxAckPending,
  };
  try {
    await setup.jsm.consumers.add(streamName, { durable_name: durable, ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All, ...settings });
  } catch {
    // It exists with other settings (an older deployment): bring it to these.
    await setup.jsm.consumers.update(streamName, durable, settings);
  }
  return setup.js.consumers.get(streamName, durable);
}

/** Sets the consumer up again after a failed pull: the stream or consumer may be gone (deleted, server state lost). */
export async function reopenAfter(err: unknown, setup: PullConsumerSetup, current: Consumer, maxAckPending: number): Promise<Consumer> {
  setup.logger.warn({ err, durable: setup.consumer.durable }, "event pull failed; retrying");
  await new Promise((r) => setTimeout(r, RETRY_PULL_MS));
  return openDurable(setup, true, maxAckPending).catch((openErr: unknown) => {
    setup.logger.warn({ err: openErr, durable: setup.consumer.durable }, "event consumer could not be set up again");
    return current;
  });
}

/**
 * A durable pull consumer handling one event at a time, in stream order:
 * with one unacknowledged event allowed, a failed event (nak with a delay)
 * holds back the ones after it, as on the in-process bus. Events arrive on
 * one long-lived pull (the client's `consume`), not a subscription and a
 * request per event: a third of the server's work per event, and of ours.
 */
export async function runPullConsumer<E extends EventDef>(setup: PullConsumerSetup<E>, handler: (message: EventMessageOf<E>) => Promise<void>): Promise<Stoppable> {
  const { logger, consumer: options } = setup;
  const backoff = options.backoffMs ?? DEFAULT_BACKOFF_MS;
  const maxDeliver = options.maxDeliver ?? 0;


  const settle = async (m: JsMsg): Promise<void> => {
    const def = setup.events.get(m.subject);
    // The stream-wide filter also brings the stream's other events: not ours, skip them.
    if (!def) return m.ack();
    const attempts = m.info.deliveryCount;
    // A slow handler is not a lost one: keep JetStream from redelivering meanwhile.
    const keepAlive = setInterval(() => m.working(), Math.max(1_000, setup.ackWaitMs / 3));
    try {
      const message = receivedEventReadingHeaders(def, m.json(), { deliveryCount: attempts, streamSequence: m.seq }, () => headerValues(m.headers));
      await consumeEvent("nats", options.durable, message, maxDeliver > 0 && attempts >= maxDeliver, handler);
    } catch (err) {
      if (maxDeliver > 0 && attempts >= maxDeliver) {
        logger.error({ err, subject: def.subject, attempts, durable: options.durable }, "event given up after the last delivery");
        m.term();
        return;
      }
      logger.warn({ err, subject: def.subject, attempts, durable: options.durable }, "event handler failed; redelivering");
      m.nak(retryPauseMs(err, attempts, backoff));
      return;
    } finally {
      clearInterval(keepAlive);
    }
    // Confirmed, so a consumer restarted right after stop() never sees a handled event again.
    await setup.confirmAck(m).catch((err: unknown) => {
      logger.warn({ err, subject: def.subject, durable: options.durable }, "event acknowledgement not confirmed; it may be redelivered");
    });
  };

  let stopped = false;
  let consumer = await openDurable(setup, false, 1);
  let pulling: ConsumerMessages | undefined;
  const running = () => !stopped && setup.isOpen();

  const loop = async (): Promise<void> => {
    while (running()) {
      try {
        pulling = await consumer.consume({ expires: PULL_EXPIRES_MS, abort_on_missing_resource: true });
        // stop() may have come while the pull was being set up.
        if (!running()) await pulling.close();
        for await (const m of pulling) {
          // Delivered after stop(): handed straight back, for whoever consumes next.
          if (!running()) m.nak();
          else await settle(m);
        }
        if (running()) throw new Error("the event pull ended");
      } catch (err) {
        if (running()) consumer = await reopenAfter(err, setup, consumer, 1);
      }
    }
  };

  const done = loop();
  return {
    stop: async () => {
      stopped = true;
      // Ends the pull before the event in hand is acknowledged, so the server has no next one to send us.
      void pulling?.close();
      await done;
    },
  };
}
