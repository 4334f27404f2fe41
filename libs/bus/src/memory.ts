import { withinDeadline } from "@sched/deadline";
import { AppError, unavailable } from "@sched/errors";
import type { Endpoint, EventDef, HttpReply, NoticeDef, PayloadOf, ReplyOf, RequestOf, RouteEndpoint } from "@sched/proto";
import type { Logger } from "@sched/logging";
import type { BusOutcome } from "@sched/telemetry";
import { decodeCaller, encodeCaller, parsedBy, receivedReply, requestDeadline, type Served } from "./codec.js";
import { decodeHttpReply, encodeHttpReply } from "./httpReply.js";
import { MemoryEventLog, type AppendOutcome, type EventLog, type NewEvent, type StoredEvent } from "./eventLog.js";
import { RecentEvents } from "./recentEvents.js";
import { receivedEvent } from "./receivedEvent.js";
import { retryPauseMs } from "./retryPause.js";
import { consumeEvent, consumeEvents, outcomeOf, publishEvent, receiveNotice, sendNotice, sendRequest, serveRequest } from "./observed.js";
import {
  BatchNotReady,
  checkMaxBatch,
  DEFAULT_BACKOFF_MS,
  type BatchConsumerOptions,
  type Bus,
  type ConsumerOptions,
  type EndpointBinding,
  type EventMessageOf,
  PublishOrderError,
  type PublishOptions,
  type RequestOptions,
  type ServiceInfo,
  type ServedEndpoints,
  type Stoppable,
} from "./types.js";

/** A publish's event waiting for its turn to be appended to `log`, and its publish waiting for the outcome. */
interface WaitingEvent {
  log: EventLog;
  event: NewEvent;
  resolve: (outcome: AppendOutcome) => void;
  reject: (err: Error) => void;
}

interface Responder {
  binding: EndpointBinding;
  stopped: boolean;
  inFlight: Set<Promise<unknown>>;
}

/** Wire round-trip: handlers never share object references with callers, as on NATS. */
const wire = (value: unknown): unknown => (value === undefined ? value : JSON.parse(JSON.stringify(value)));

/** A consumer's loop reads the log again after this long when the log could not be read. */
const UNREADABLE_LOG_RETRY_MS = 1_000;

/** How often the streams with a maximum age are pruned. */
const PRUNE_EVERY_MS = 10 * 60_000;

/**
 * The bus for standalone mode: one process, the same semantics the services
 * rely on from NATS — deadlines, queue groups (round robin among responders),
 * no-responder errors, durable at-least-once consumers that resume by name,
 * de-duplication by message id, and fan-out notices. Events and consumer
 * positions are kept in `log`: in memory by default, or in a database
 * (KnexEventLog, `@sched/db/event-log`), where they outlive the process as JetStream's do.
 */
export class MemoryBus implements Bus {
  private readonly responders = new Map<string, Responder[]>();
  private readonly roundRobin = new Map<string, number>();
  private readonly noticeHandlers = new Map<string, Set<(payload: unknown, headers: Record<string, string>) => void>>();
  /** Running consumers: each is woken by a publish of one of its subjects (every one on close). */
  private readonly consumers = new Set<{ subjects: ReadonlySet<string>; wake: () => void; waitsForPublish: () => boolean }>();
  /**
   * Each durable consumer's acknowledged position as last read or stored:
   * the bus is the log's only writer of positions, so the log is read once
   * per durable rather than before every delivery.
   */
  private readonly ackFloors = new Map<string, number>();
  /**
   * How far each durable consumer is known to have nothing to read: past
   * its acknowledged position when a read of the log found none of its
   * events up to where the bus's memory of recent events starts.
   */
  private readonly caughtUp = new Map<string, number>();
  /** The events stored lately, read by consumers instead of the log while they are up to date. */
  private readonly recent = new RecentEvents();
  /** The streams published to that keep their events for a time (`maxAgeMs`), by name. */
  private readonly agedStreams = new Map<string, number>();
  private pruning: NodeJS.Timeout | undefined;
  /** The append under way: each waits for the one before, so each sees the log as that one left it. */
  private appending: Promise<unknown> = Promise.resolve();
  /** Events waiting for their turn to be appended, in the order they were published. */
  private readonly waiting: WaitingEvent[] = [];
  /** Publishes not yet returned (see settled). */
  private publishing = 0;
  private closed = false;

  constructor(
    private readonly logger: Logger,
    private readonly log: EventLog = new MemoryEventLog(),
  ) {}

  request<E extends Endpoint>(endpoint: E, payload: RequestOf<E>, options: RequestOptions = {}): Promise<ReplyOf<E>> {
    return this.exchange(endpoint, payload, options, (served) =>
      receivedReply(endpoint, served.kind === "route" ? decodeHttpReply(encodeHttpReply(served.reply), false) : wire(served.reply), this.logger),
    );
  }

  forward(endpoint: RouteEndpoint, payload: RequestOf<RouteEndpoint>, options: RequestOptions = {}): Promise<HttpReply> {
    return this.exchange(endpoint, payload, options, (served) => {
      if (served.kind !== "route") throw new Error(`${endpoint.subject} is served as an internal endpoint, not a route`);
      return decodeHttpReply(encodeHttpReply(served.reply), true);
    });
  }

  /** One request to a live responder, its answer read by `read` as it would cross the wire. */
  private async exchange<R>(endpoint: Endpoint, payload: unknown, options: RequestOptions, read: (served: Served) => R): Promise<R> {
    let failure: BusOutcome | undefined;
    const send = async (headers: Record<string, string>): Promise<R> => {
      const live = (this.responders.get(endpoint.subject) ?? []).filter((r) => !r.stopped);
      if (this.closed || live.length === 0) {
        failure = this.closed ? "unavailable" : "no_responders";
        throw unavailable();
      }
      const deadline = requestDeadline(options.timeoutMs);
      const timeoutMs = deadline - Date.now();
      if (timeoutMs <= 0) {
        failure = "timeout";
        throw unavailable();
      }
      const turn = this.roundRobin.get(endpoint.subject) ?? 0;
      this.roundRobin.set(endpoint.subject, turn + 1);
      const responder = live[turn % live.length]!;
      const ctx = { subject: endpoint.subject, caller: options.caller ? decodeCaller(encodeCaller(options.caller)) : undefined, headers: { ...headers }, deadline };
      const served = serveRequest("memory", responder.binding, () => wire(payload), ctx, this.logger);
      responder.inFlight.add(served);
      void served.catch(() => undefined).finally(() => responder.inFlight.delete(served));
      try {
        const answer = await withinDeadline(served, timeoutMs, () => {
          failure = "timeout";
          throw unavailable();
        });
        return read(answer);
      } catch (err) {
        throw err instanceof AppError ? AppError.fromJSON(err.toJSON()) : err;
      }
    };
    return sendRequest("memory", endpoint.subject, options, send, (err) => failure ?? outcomeOf(err));
  }

  async serve(_service: ServiceInfo, bindings: EndpointBinding[]): Promise<ServedEndpoints> {
    const mine: Responder[] = bindings.map((binding) => ({ binding, stopped: false, inFlight: new Set() }));
    for (const r of mine) {
      const list = this.responders.get(r.binding.endpoint.subject) ?? [];
      list.push(r);
      this.responders.set(r.binding.endpoint.subject, list);
    }
    return {
      isServing: () => mine.every((r) => !r.stopped),
      stop: async () => {
        for (const r of mine) {
          r.stopped = true;
          const list = this.responders.get(r.binding.endpoint.subject) ?? [];
          this.responders.set(r.binding.endpoint.subject, list.filter((x) => x !== r));
        }
        // Requests already taken are finished, as NATS drains a stopped service.
        await Promise.allSettled(mine.flatMap((r) => [...r.inFlight]));
      },
    };
  }

  /** The log keeps events as values: the stored text is read and published as any other payload. */
  async publishStored<E extends EventDef>(event: E, json: string, options: PublishOptions): Promise<void> {
    await this.publish(event, JSON.parse(json) as PayloadOf<E>, options);
  }

  async publish<E extends EventDef>(event: E, payload: PayloadOf<E>, options: PublishOptions): Promise<void> {
    if (this.closed) throw unavailable();
    const checked = event.payload.parse(payload);
    let stored: StoredEvent | undefined;
    this.publishing += 1;
    try {
      // Taken in turn only once the log is this publish's: a publish waiting in
      // line for the log must not hold up one that already has it (an outbox
      // relay's transaction on the shared embedded database).
      await this.log.storing(
        (log) => this.append(log, event, checked, options, (e) => (stored = e)),
        // Its consumers are woken once the event is kept: they read it from memory then.
        (outcome) => {
          if (!stored) return;
          this.recent.ended(stored, outcome);
          if (outcome !== "undone") for (const c of this.consumers) if (c.subjects.has(event.subject)) c.wake();
        },
      );
    } finally {
      this.publishing -= 1;
    }
    if (event.stream.maxAgeMs !== undefined && !this.agedStreams.has(event.stream.name)) this.keepFor(event.stream.name, event.stream.maxAgeMs);
  }

  /**
   * Forgets a stream's events once older than its `maxAgeMs`, as JetStream
   * does (the request log keeps a day): checked every PRUNE_EVERY_MS, so an
   * `npm start` left running does not keep every request it ever served.
   */
  private keepFor(stream: string, maxAgeMs: number): void {
    this.agedStreams.set(stream, maxAgeMs);
    this.pruning ??= setInterval(() => void this.prune(), PRUNE_EVERY_MS).unref();
  }

  /** Forgets what the aged streams keep no longer; resolves to how many events went. */
  async prune(): Promise<number> {
    let pruned = 0;
    for (const [stream, maxAgeMs] of this.agedStreams) {
      if (this.closed) break;
      pruned += await this.log.prune(stream, maxAgeMs).catch((err: unknown) => {
        this.logger.warn({ err, stream }, "old events could not be pruned; trying again later");
        return 0;
      });
    }
    // What the log forgot is not to be read from memory either.
    if (pruned > 0) this.recent.forget();
    return pruned;
  }

  /**
   * Stores the event unless it is a duplicate; `after` is checked against the
   * stream's last event. `stored` is told the event as soon as the log has it.
   */
  private async append(log: EventLog, event: EventDef, checked: unknown, options: PublishOptions, stored: (event: StoredEvent) => void): Promise<void> {
    await publishEvent("memory", event.subject, checked, async (headers) => {
      const payload = wire(checked);
      const { msgId, after } = options;
      const outcome = await this.appendInTurn(log, { stream: event.stream.name, subject: event.subject, payload, headers, msgId, ...(after !== undefined ? { after } : {}) });
      if (!outcome.stored) {
        if (!outcome.duplicate) throw new PublishOrderError(options.msgId, options.after!);
        return;
      }
      this.recent.appended(outcome.streamSequence);
      stored({ streamSequence: outcome.streamSequence, subject: event.subject, payload, headers });
    });
  }

  /**
   * Appends the event once the appends before it are done, together with
   * every event published meanwhile to the same log (an outbox relay's batch,
   * published at once in its transaction): one append, so on the embedded
   * database one insert for the batch instead of one per event.
   */
  private appendInTurn(log: EventLog, event: NewEvent): Promise<AppendOutcome> {
    return new Promise<AppendOutcome>((resolve, reject) => {
      this.waiting.push({ log, event, resolve, reject });
      // Each event's turn appends whatever waits by then, so the first of an append runs in its own publish's context.
      this.appending = this.appending.then(() => this.appendWaiting()).catch(() => undefined);
    });
  }

  /** Appends the events waiting at the front of the line for the same log, in one append. */
  private async appendWaiting(): Promise<void> {
    const log = this.waiting[0]?.log;
    if (!log) return;
    let count = 1;
    while (this.waiting[count]?.log === log) count++;
    const batch = this.waiting.splice(0, count);
    try {
      const outcomes = await log.append(batch.map((w) => w.event));
      batch.forEach((w, i) => w.resolve(outcomes[i]!));
    } catch (err) {
      for (const w of batch) w.reject(err as Error);
    }
  }

  async consume<E extends EventDef>(options: ConsumerOptions<E>, handler: (message: EventMessageOf<E>) => Promise<void>): Promise<Stoppable> {
    const bySubject = new Map(options.events.map((e) => [e.subject, e]));
    const subjects = new Set(bySubject.keys());
    const backoff = options.backoffMs ?? DEFAULT_BACKOFF_MS;
    const maxDeliver = options.maxDeliver ?? 0;
    return this.runConsumer(subjects, async ({ halted, nextEvent, backOff }) => {
      let attempts = 0;
      while (!halted()) {
        const [next] = (await this.readPastAckFloor(options.durable, subjects, 1, backOff)).events;
        if (!next || halted()) {
          await nextEvent();
          continue;
        }
        attempts += 1;
        try {
          const message = receivedEvent(bySubject.get(next.subject)!, wire(next.payload), { deliveryCount: attempts, streamSequence: next.streamSequence, headers: next.headers });
          await consumeEvent("memory", options.durable, message, maxDeliver > 0 && attempts >= maxDeliver, handler);
        } catch (err) {
          if (maxDeliver === 0 || attempts < maxDeliver) {
            this.logger.warn({ err, subject: next.subject, attempts }, "event handler failed; redelivering");
            await backOff(retryPauseMs(err, attempts, backoff));
            continue;
          }
          this.logger.error({ err, subject: next.subject, attempts }, "event given up after the last delivery");
        }
        // Settled even when stop() came meanwhile: stop waits for the handler and keeps its outcome.
        await this.acknowledge(options.durable, next.streamSequence);
        attempts = 0;
      }
    });
  }

  async consumeBatches<E extends EventDef>(options: BatchConsumerOptions<E>, handler: (messages: EventMessageOf<E>[]) => Promise<void>): Promise<Stoppable> {
    const maxBatch = checkMaxBatch(options.maxBatch);
    const bySubject = new Map(options.events.map((e) => [e.subject, e]));
    const subjects = new Set(bySubject.keys());
    const backoff = options.backoffMs ?? DEFAULT_BACKOFF_MS;
    return this.runConsumer(subjects, async ({ halted, nextEvent, backOff }) => {
      let attempts = 0;
      // A failed batch is retried as it was, whatever arrived since.
      let batch: StoredEvent[] = [];
      // The position the batch was read from: every event of the consumer's before the batch is at or before it.
      let follows = 0;
      while (!halted()) {
        if (batch.length === 0) ({ floor: follows, events: batch } = await this.readPastAckFloor(options.durable, subjects, maxBatch, backOff));
        if (batch.length === 0 || halted()) {
          await nextEvent();
          continue;
        }
        attempts += 1;
        try {
          const messages = batch.map((e, i) =>
            receivedEvent(bySubject.get(e.subject)!, wire(e.payload), {
              deliveryCount: attempts,
              streamSequence: e.streamSequence,
              follows: i === 0 ? follows : batch[i - 1]!.streamSequence,
              headers: e.headers,
            }),
          );
          await consumeEvents("memory", options.durable, messages, handler);
        } catch (err) {
          if (err instanceof BatchNotReady) this.logger.debug({ reason: err.message, events: batch.length, attempts }, "event batch waits for earlier events");
          else this.logger.warn({ err, events: batch.length, attempts }, "event batch handler failed; retrying");
          await backOff(retryPauseMs(err, attempts, backoff));
          continue;
        }
        await this.acknowledge(options.durable, batch.at(-1)!.streamSequence);
        batch = [];
        attempts = 0;
      }
    });
  }

  /**
   * The next events a durable consumer has not acknowledged, from memory when
   * it is up to date, else from the log, and the position read from; none,
   * after a pause, while the log cannot be read.
   */
  private async readPastAckFloor(durable: string, subjects: ReadonlySet<string>, limit: number, backOff: (ms: number) => Promise<void>): Promise<{ floor: number; events: StoredEvent[] }> {
    try {
      let floor = this.ackFloors.get(durable);
      if (floor === undefined) {
        floor = await this.log.ackFloor(durable);
        this.ackFloors.set(durable, floor);
      }
      // Between the floor and where the consumer caught up there is none of its events: memory answers from there.
      const remembered = this.recent.read(Math.max(floor, this.caughtUp.get(durable) ?? 0), subjects, limit);
      if (remembered) return { floor, events: remembered };
      // Every event up to where the memory starts has ended before this read of the log runs (appends
      // and reads take turns on the log): finding none of them, the consumer reads from memory next.
      const coveredFrom = this.recent.coveredFrom;
      const events = await this.log.read(floor, subjects, limit);
      if (events.length === 0 && coveredFrom !== undefined && coveredFrom > floor) this.caughtUp.set(durable, coveredFrom);
      return { floor, events };
    } catch (err) {
      this.logger.warn({ err, durable }, "event log could not be read; retrying");
      await backOff(UNREADABLE_LOG_RETRY_MS);
      return { floor: 0, events: [] };
    }
  }

  private async acknowledge(durable: string, position: number): Promise<void> {
    try {
      await this.log.acknowledge(durable, position);
      this.ackFloors.set(durable, position);
    } catch (err) {
      this.logger.warn({ err, durable }, "event acknowledgement not stored; it may be delivered again");
    }
  }

  /**
   * Runs a consumer's loop until stop(): `nextEvent` waits for a publish of
   * one of its subjects (at once if one came since the last wait, or once stopped), `backOff` waits
   * out a delay that only stop() cuts short.
   */
  private runConsumer(subjects: ReadonlySet<string>, loop: (waits: { halted: () => boolean; nextEvent: () => Promise<void>; backOff: (ms: number) => Promise<void> }) => Promise<void>): Stoppable {
    let stopped = false;
    // Set by a publish while the loop was not waiting (reading the log), so that it reads again rather than sleeps.
    let published = false;
    let wake: () => void = () => {};
    // In nextEvent's wait: it read every event of its subjects published before it started waiting.
    let waitsForPublish = false;
    const consumer = {
      subjects,
      wake: () => {
        published = true;
        wake();
      },
      waitsForPublish: () => waitsForPublish,
    };
    this.consumers.add(consumer);
    const halted = () => stopped || this.closed;
    const done = loop({
      halted,
      nextEvent: () =>
        new Promise<void>((resolve) => {
          const go = () => {
            published = false;
            waitsForPublish = false;
            wake = () => {};
            resolve();
          };
          if (published || halted()) go();
          else {
            waitsForPublish = true;
            wake = go;
          }
        }),
      backOff: (ms) =>
        new Promise<void>((resolve) => {
          const t = setTimeout(resolve, ms);
          wake = () => {
            if (!halted()) return;
            clearTimeout(t);
            resolve();
          };
        }),
    });
    return {
      stop: async () => {
        stopped = true;
        this.consumers.delete(consumer);
        wake();
        await done;
      },
    };
  }

  async notify<N extends NoticeDef>(notice: N, payload: PayloadOf<N>): Promise<void> {
    const checked = wire(notice.payload.parse(payload));
    await sendNotice("memory", notice.subject, checked, (headers) => {
      for (const h of this.noticeHandlers.get(notice.subject) ?? []) queueMicrotask(() => h(wire(checked), headers));
    });
  }

  async onNotice<N extends NoticeDef>(notice: N, handler: (payload: PayloadOf<N>) => void): Promise<Stoppable> {
    const set = this.noticeHandlers.get(notice.subject) ?? new Set();
    const h = (p: unknown, headers: Record<string, string>) => {
      // Checked on arrival as on NATS: what a handler is given is what the contract's schema gives back.
      const parsed = parsedBy<N["payload"]>(notice.payload, p);
      if (parsed.success) receiveNotice("memory", notice.subject, parsed.data, headers, () => handler(parsed.data), this.logger);
      else this.logger.warn({ subject: notice.subject }, "notice does not match its contract; ignored");
    };
    set.add(h);
    this.noticeHandlers.set(notice.subject, set);
    return { stop: async () => void set.delete(h) };
  }

  isConnected(): boolean {
    return !this.closed;
  }

  /** Messages stay in the process: no size limit. */
  maxMessageBytes(): undefined {
    return undefined;
  }

  /**
   * Whether every event published has been read by every running consumer
   * of its subject: no publish under way, and each consumer waits for a
   * publish with none since it last found nothing to read (not handling a
   * batch, not backing off). A publish that joined a transaction still under
   * way wakes its consumers only when that ends: ask while holding the
   * session. Benchmarks wait for it before they count a run as over.
   */
  settled(): boolean {
    return this.publishing === 0 && [...this.consumers].every((c) => c.waitsForPublish());
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.pruning);
    for (const c of this.consumers) c.wake();
    // A publish under way finishes storing its event (or fails) before the log may be closed.
    await this.appending;
  }
}
