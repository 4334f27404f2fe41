import { AppError, internalError, unavailable } from "@sched/errors";
import type { Logger } from "@sched/logging";
import type { Endpoint, EventDef, HttpReply, NoticeDef, PayloadOf, ReplyOf, RequestOf, RouteEndpoint, StreamDef } from "@sched/proto";
import { nanos, type Msg, type MsgHdrs, type NatsConnection } from "@nats-io/nats-core";
import {
  JetStreamApiCodes,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  StorageType,
  type JetStreamClient,
  type JetStreamManager,
} from "@nats-io/jetstream";
import { ServiceErrorCodeHeader, Svcm, type ServiceMsg } from "@nats-io/services";
import { connect } from "@nats-io/transport-node";
import { tracingEnabled, type BusOutcome } from "@sched/telemetry";
import { CALLER_HEADER, DEADLINE_HEADER, decodeCaller, decodeDeadline, encodeCaller, parsedBy, receivedReply, requestDeadline } from "./codec.js";
import { endpointMetadata } from "./endpointMetadata.js";
import { decodeHttpReply, encodeHttpReply, HTTP_REPLY_HEADER } from "./httpReply.js";
import { outcomeOf, publishEvent, receiveNotice, sendNotice, sendRequest, serveRequest } from "./observed.js";
import { headerText, headerValues } from "./headerText.js";
import { headerOf, putHeader, toNatsHeaders } from "./natsHeaders.js";
import { replyHeadHeaders } from "./replyHeads.js";
import { ACK, checkPublishAck, JETSTREAM_ANSWER_TIMEOUT_MS, withPublishHeaders } from "./jetStreamPublish.js";
import { runBatchConsumer } from "./natsBatchConsumer.js";
import { OncePerTurn } from "./oncePerTurn.js";
import { NatsReplies, RequestNotAnswered } from "./natsReplies.js";
import { runPullConsumer, type PullConsumerSetup } from "./natsConsumer.js";
import {
  checkMaxBatch,
  PublishOrderError,
  type BatchConsumerOptions,
  type Bus,
  type ConsumerOptions,
  type EndpointBinding,
  type EventMessageOf,
  type PublishOptions,
  type RequestOptions,
  type ServiceInfo,
  type ServedEndpoints,
  type Stoppable,
} from "./types.js";

export interface NatsBusOptions {
  servers: string;
  /** Prefix of every subject and stream, so deployments and test suites sharing a server never meet. */
  namespace: string;
  /** Connection name shown by the server (the service's name). */
  name: string;
  logger: Logger;
  /** How long a delivered event may stay unacknowledged before JetStream redelivers it. */
  ackWaitMs?: number;
  /** Copies of each stream this bus creates (a clustered JetStream keeps 3); an existing stream keeps its own. */
  streamReplicas?: number;
  /** How long a batch consumer's batch of fewer than its maxBatch events waits for more (runBatchConsumer); BATCH_LINGER_MS unless given. */
  batchLingerMs?: number;
}

/** JetStream's "wrong last msg ID": the stream's last event is not the expected one. */
const WRONG_LAST_MSG_ID = 10070;

/**
 * How long a batch consumer's partial batch waits for more events while
 * the stream is busy (the batch before ended less than this ago). Each
 * batch costs its consumer a statement and a confirmed acknowledgement, and
 * the server its messages, whatever its size: on creates flat out, batches
 * of the MEETINGS stream's three consumers went from about 20 events to 35
 * and their CPU per create down by a fifth (docs/benchmarks.md). An event
 * waits at most this much longer, as the outbox relay's linger lets it; one
 * after a quiet spell does not wait.
 */
const BATCH_LINGER_MS = 30;

/** Events published again within this window with the same msgId are stored once. */
const DUPLICATE_WINDOW_MS = 2 * 60_000;

// `undefined` travels as an empty payload so both wirings hand handlers the same value.
const encode = (value: unknown): string => (value === undefined ? "" : JSON.stringify(value));
const decode = (msg: { data: Uint8Array; json(): unknown }): unknown => (msg.data.length === 0 ? undefined : msg.json());
/** An HTTP route's reply as it came: its head in a header, its body's JSON text as the payload. */
const httpReplyOf = (msg: Msg) => ({ head: headerOf(msg.headers, HTTP_REPLY_HEADER), body: msg.data });
/** A forwarded route's reply, its body left as the JSON text it came as. */
const forwardedReply = (msg: Msg): HttpReply => decodeHttpReply(httpReplyOf(msg), true);

/**
 * How each failed request ended, for its metrics, by the error it failed
 * with: a 503 says neither whether the deadline passed nor whether nobody
 * serves the subject. Kept beside the error, not in a closure made for
 * every request.
 */
const failures = new WeakMap<object, BusOutcome>();
const outcomeOfFailure = (err: unknown): BusOutcome => (typeof err === "object" && err !== null && failures.get(err)) || outcomeOf(err);

/** A 503 for a request that failed so, its outcome kept for its metrics. */
function failedWith(outcome: BusOutcome): AppError {
  const err = unavailable();
  failures.set(err, outcome);
  return err;
}

/** The services API accepts names of letters, digits, `_` and `-` only. */
const svcmName = (name: string): string => name.replace(/[^A-Za-z0-9_-]/g, "_");

/** Connects to NATS and returns the bus over it. */
export async function connectNatsBus(options: NatsBusOptions): Promise<Bus> {
  const nc = await connect({
    servers: options.servers,
    name: options.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1_000,
    // Every failure becomes an AppError naming the subject; the client's own stack capture on each request is pure cost.
    noAsyncTraces: true,
  });
  const jsm = await jetstreamManager(nc);
  return new NatsBus(nc, jetstream(nc), jsm, options);
}

/**
 * The bus over NATS: the services API for request/reply (queue group per
 * service, errors as service errors), JetStream for durable events, core
 * publish/subscribe for fan-out notices.
 */
class NatsBus implements Bus {
  private readonly streams = new Map<string, Promise<string>>();
  /** Served endpoints and running consumers, stopped gracefully by close(). */
  private readonly running = new Set<Stoppable>();
  private connected = true;
  private closing = false;
  private readonly replies: NatsReplies;
  /** Acknowledgements to be confirmed, sent at once: in the same write as the batch's other acknowledgements. */
  private readonly ackConfirmations: NatsReplies;
  /** Requests sent and replies to served requests, written together once per turn of the event loop. */
  private readonly outgoing = new OncePerTurn((err) => this.options.logger.warn({ err }, "a message could not be sent"));

  constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly options: NatsBusOptions,
  ) {
    this.replies = new NatsReplies(nc, this.outgoing);
    this.ackConfirmations = new NatsReplies(nc);
    void this.watchConnection();
  }

  private async watchConnection(): Promise<void> {
    for await (const s of this.nc.status()) {
      if (s.type === "disconnect") {
        this.connected = false;
        this.options.logger.warn({ server: s.server }, "bus disconnected; reconnecting");
      } else if (s.type === "reconnect") {
        this.connected = true;
        this.options.logger.info({ server: s.server }, "bus reconnected");
      }
    }
  }

  private subject(name: string): string {
    return `${this.options.namespace}.${name}`;
  }

  private track(stoppable: Stoppable): Stoppable {
    const tracked: Stoppable = {
      stop: async () => {
        this.running.delete(tracked);
        await stoppable.stop();
      },
    };
    this.running.add(tracked);
    return tracked;
  }

  request<E extends Endpoint>(endpoint: E, payload: RequestOf<E>, options: RequestOptions = {}): Promise<ReplyOf<E>> {
    return this.exchange(endpoint, payload, options, (msg) =>
      receivedReply(endpoint, endpoint.kind === "route" ? decodeHttpReply(httpReplyOf(msg), false) : decode(msg), this.options.logger),
    );
  }

  forward(endpoint: RouteEndpoint, payload: RequestOf<RouteEndpoint>, options: RequestOptions = {}): Promise<HttpReply> {
    return this.exchange(endpoint, payload, options, forwardedReply);
  }

  /** One request and its answer, read by `read`; a service's error arrives as the AppError it sent. */
  private async exchange<R>(endpoint: Endpoint, payload: unknown, options: RequestOptions, read: (msg: Msg) => R): Promise<R> {
    // `headers` are the caller's plus the trace context of the CLIENT span.
    const send = async (headers: Readonly<Record<string, string>>): Promise<R> => {
      const deadline = requestDeadline(options.timeoutMs);
      const timeout = deadline - Date.now();
      if (timeout <= 0) throw failedWith("timeout");
      const h = toNatsHeaders(headers);
      if (options.caller) putHeader(h, CALLER_HEADER, encodeCaller(options.caller));
      putHeader(h, DEADLINE_HEADER, String(deadline));
      let msg: Msg;
      try {
        msg = await this.replies.request(this.subject(endpoint.subject), encode(payload), h, timeout);
      } catch (err) {
        // Deadline passed, nobody serves the subject, or the connection is gone: a fast 503 either way.
        this.options.logger.debug({ err, subject: endpoint.subject }, "request not answered");
        throw failedWith(err instanceof RequestNotAnswered ? err.outcome : "unavailable");
      }
      // A service error, as the services API's ServiceError.isServiceError reads it.
      if (headerOf(msg.headers, ServiceErrorCodeHeader) !== "") {
        let body: unknown;
        try {
          body = decode(msg);
        } catch {
          body = undefined;
        }
        throw AppError.fromJSON(body);
      }
      return read(msg);
    };
    return sendRequest("nats", endpoint.subject, options, send, outcomeOfFailure);
  }

  async serve(service: ServiceInfo, bindings: EndpointBinding[]): Promise<ServedEndpoints> {
    const name = svcmName(service.name);
    const svc = await new Svcm(this.nc).add({
      name,
      version: service.version,
      ...(service.description ? { description: service.description } : {}),
      queue: name,
    });
    const inFlight = new Set<Promise<void>>();
    for (const binding of bindings) {
      svc.addEndpoint(svcmName(binding.endpoint.subject), {
        subject: this.subject(binding.endpoint.subject),
        metadata: endpointMetadata(binding.endpoint),
        handler: (err, msg) => {
          if (err) {
            this.options.logger.error({ err, subject: binding.endpoint.subject }, "service endpoint failed");
            return;
          }
          const answering = this.answer(binding, msg);
          inFlight.add(answering);
          void answering.finally(() => inFlight.delete(answering));
        },
      });
    }
    // Serving means the server knows the subscriptions: a request sent right after finds them.
    await this.nc.flush();
    let serving = true;
    let stopping = false;
    void svc.stopped.then((err) => {
      serving = false;
      if (!stopping) this.options.logger.error({ err, service: name }, "service endpoints stopped; readiness is false");
    });
    const tracked = this.track({
      stop: async () => {
        stopping = true;
        // Stop taking requests (the server confirms the unsubscriptions), then finish those taken.
        await svc.stop();
        await Promise.allSettled([...inFlight]);
      },
    });
    return { stop: tracked.stop, isServing: () => serving && !svc.isStopped };
  }

  private async answer(binding: EndpointBinding, msg: ServiceMsg): Promise<void> {
    try {
      const { caller, deadline, headers } = readHeaders(msg.headers);
      const raw = (): unknown => {
        try {
          return decode(msg);
        } catch {
          throw new AppError("invalid_request", "The request is not valid JSON.");
        }
      };
      const ctx = { subject: binding.endpoint.subject, caller: decodeCaller(caller), headers, deadline: decodeDeadline(deadline) };
      const served = await serveRequest("nats", binding, raw, ctx, this.options.logger);
      if (served.kind === "route") {
        const wire = encodeHttpReply(served.reply);
        const h = replyHeadHeaders(wire.head, served.reply.headers === undefined);
        await this.outgoing.run(() => msg.respond(wire.body, { headers: h }));
      } else {
        const body = encode(served.reply);
        await this.outgoing.run(() => msg.respond(body));
      }
    } catch (err) {
      const appError = err instanceof AppError ? err : internalError();
      if (!(err instanceof AppError)) this.options.logger.error({ err, subject: binding.endpoint.subject }, "request could not be answered");
      // The payload carries the error; the header's description is for people watching the wire, and may quote the client's text.
      await this.outgoing.run(() => msg.respondError(appError.status, headerText(appError.message), encode(appError.toJSON())));
    }
  }

  /** Creates the stream on first use, or brings an existing one to the definition. */
  private ensureStream(stream: StreamDef): Promise<string> {
    const name = `${this.options.namespace}_${stream.name}`;
    let ready = this.streams.get(name);
    if (!ready) {
      ready = this.createOrUpdateStream(name, stream);
      ready.catch(() => this.streams.delete(name));
      this.streams.set(name, ready);
    }
    return ready;
  }

  private async createOrUpdateStream(name: string, stream: StreamDef): Promise<string> {
    // An age the definition states is kept to; without one, whatever limit an operator gave the stream stays.
    const wanted = {
      subjects: [`${this.subject(stream.subjectPrefix)}.>`],
      duplicate_window: nanos(DUPLICATE_WINDOW_MS),
      ...(stream.maxAgeMs === undefined ? {} : { max_age: nanos(stream.maxAgeMs) }),
    };
    const current = await this.jsm.streams.info(name).catch((err: unknown) => {
      if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound) return undefined;
      throw err;
    });
    if (!current) {
      try {
        await this.jsm.streams.add({ name, storage: StorageType.File, num_replicas: this.options.streamReplicas ?? 1, ...wanted });
      } catch (err) {
        // Another replica may have created it first.
        await this.jsm.streams.info(name).catch(() => {
          throw err;
        });
      }
      return name;
    }
    const { subjects, duplicate_window, max_age } = current.config;
    const ageDiffers = wanted.max_age !== undefined && max_age !== wanted.max_age;
    if (duplicate_window !== wanted.duplicate_window || ageDiffers || JSON.stringify(subjects) !== JSON.stringify(wanted.subjects)) {
      await this.jsm.streams.update(name, wanted);
    }
    return name;
  }

  async publish<E extends EventDef>(event: E, payload: PayloadOf<E>, options: PublishOptions): Promise<void> {
    const checked = event.payload.parse(payload);
    await this.store(event, checked, encode(checked), options);
  }

  async publishStored<E extends EventDef>(event: E, json: string, options: PublishOptions): Promise<void> {
    // Checked by its schema when it was stored: its text goes out as it is. Read back only for a recorded span's ids.
    await this.store(event, tracingEnabled() ? JSON.parse(json) : undefined, json, options);
  }

  /** Stores one event's JSON text `data` in its stream; `payload` is the event, for its span's attributes. */
  private async store(event: EventDef, payload: unknown, data: string, options: PublishOptions): Promise<void> {
    try {
      await this.ensureStream(event.stream);
      // `headers` hold the trace context of the PRODUCER span, when there is one.
      await publishEvent("nats", event.subject, payload, async (headers) => {
        // A JetStream publish is a request whose answer says the event is stored: sent as our own requests are.
        const h = withPublishHeaders(toNatsHeaders(headers), options.msgId, options.after);
        checkPublishAck(await this.replies.request(this.subject(event.subject), data, h, JETSTREAM_ANSWER_TIMEOUT_MS));
      });
    } catch (err) {
      if (options.after !== undefined && err instanceof JetStreamApiError && err.code === WRONG_LAST_MSG_ID) throw new PublishOrderError(options.msgId, options.after);
      // The stream may have been removed behind our back: look again on the next publish.
      this.streams.delete(`${this.options.namespace}_${event.stream.name}`);
      // The caller reports it (the outbox relay once per batch, not once per event), with its cause.
      throw Object.assign(unavailable(), { cause: err });
    }
  }

  async consume<E extends EventDef>(options: ConsumerOptions<E>, handler: (message: EventMessageOf<E>) => Promise<void>): Promise<Stoppable> {
    return this.track(await runPullConsumer(this.pullSetup(options), handler));
  }

  async consumeBatches<E extends EventDef>(options: BatchConsumerOptions<E>, handler: (messages: EventMessageOf<E>[]) => Promise<void>): Promise<Stoppable> {
    const { maxBatch, ...rest } = options;
    return this.track(await runBatchConsumer(this.pullSetup(rest), checkMaxBatch(maxBatch), handler, this.options.batchLingerMs ?? BATCH_LINGER_MS));
  }

  private pullSetup<E extends EventDef>(options: ConsumerOptions<E>): PullConsumerSetup<E> {
    const streams = new Set(options.events.map((e) => e.stream.name));
    if (streams.size !== 1) throw new Error("a consumer reads the events of exactly one stream");
    const stream = options.events[0]!.stream;
    return {
      jsm: this.jsm,
      js: this.js,
      logger: this.options.logger,
      ensureStream: (fresh) => {
        if (fresh) this.streams.delete(`${this.options.namespace}_${stream.name}`);
        return this.ensureStream(stream);
      },
      // nats-server 2.9 takes one filter subject per consumer: one event, or the whole stream.
      filter: options.events.length === 1 ? this.subject(options.events[0]!.subject) : `${this.subject(stream.subjectPrefix)}.>`,
      streamWide: options.events.length !== 1,
      events: new Map(options.events.map((e) => [this.subject(e.subject), e])),
      consumer: options,
      ackWaitMs: this.options.ackWaitMs ?? 30_000,
      confirmAck: async (m) => {
        // The client's message keeps the subject its acknowledgement goes to as `reply`, outside its type: without one, its own ackAck.
        const { reply } = m as Partial<{ reply: unknown }>;
        if (typeof reply === "string" && reply !== "") await this.ackConfirmations.request(reply, ACK, undefined, JETSTREAM_ANSWER_TIMEOUT_MS);
        else await m.ackAck();
      },
      isOpen: () => !this.nc.isClosed() && !this.closing,
    };
  }

  async notify<N extends NoticeDef>(notice: N, payload: PayloadOf<N>): Promise<void> {
    const checked = notice.payload.parse(payload);
    await sendNotice("nats", notice.subject, checked, (headers) => {
      this.nc.publish(this.subject(notice.subject), encode(checked), Object.keys(headers).length > 0 ? { headers: toNatsHeaders(headers) } : undefined);
    });
  }

  async onNotice<N extends NoticeDef>(notice: N, handler: (payload: PayloadOf<N>) => void): Promise<Stoppable> {
    const sub = this.nc.subscribe(this.subject(notice.subject), {
      callback: (err, msg) => {
        if (err) return;
        let parsed;
        try {
          parsed = parsedBy<N["payload"]>(notice.payload, decode(msg));
        } catch {
          return;
        }
        if (parsed.success) {
          const data = parsed.data;
          receiveNotice("nats", notice.subject, data, headerValues(msg.headers), () => handler(data), this.options.logger);
        } else this.options.logger.warn({ subject: notice.subject }, "notice does not match its contract; ignored");
      },
    });
    // Subscribed means the server knows it: a notice sent right after reaches this handler.
    await this.nc.flush();
    return { stop: async () => sub.unsubscribe() };
  }

  isConnected(): boolean {
    return this.connected && !this.closing && !this.nc.isClosed();
  }

  maxMessageBytes(): number | undefined {
    // Read each time: after a reconnect the server may be another, with its own limit.
    return this.nc.info?.max_payload;
  }

  /** Stops serving and consuming (letting handlers finish), then drains the connection. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    await Promise.allSettled([...this.running].map((r) => r.stop()));
    if (!this.nc.isClosed()) await this.nc.drain();
  }
}

const CALLER_HEADER_NAME = CALLER_HEADER.toLowerCase();
const DEADLINE_HEADER_NAME = DEADLINE_HEADER.toLowerCase();

/** The caller and the deadline travel in headers of their own; handlers see the other headers as they were sent. */
function readHeaders(h: MsgHdrs | undefined): { caller: string | undefined; deadline: string | undefined; headers: Record<string, string> } {
  const headers: Record<string, string> = {};
  let caller: string | undefined;
  let deadline: string | undefined;
  for (const [k, v] of Object.entries(headerValues(h))) {
    const name = k.toLowerCase();
    if (name === CALLER_HEADER_NAME) caller = v;
    else if (name === DEADLINE_HEADER_NAME) deadline = v;
    else headers[k] = v;
  }
  return { caller, deadline, headers };
}
