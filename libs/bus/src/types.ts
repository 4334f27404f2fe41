import type { z } from "zod";
import type { AnswerOf, Caller, Endpoint, EventDef, HttpReply, NoticeDef, ReplyOf, RequestOf, PayloadOf, RouteEndpoint } from "@sched/proto";

/** What a handler knows about the request besides its payload. */
export interface RequestContext {
  readonly subject: string;
  readonly caller?: Caller;
  /** Trace-context and other propagation headers, as received. */
  readonly headers: Readonly<Record<string, string>>;
  /** When the requester gives up (epoch milliseconds); the handler runs under it, nested requests inherit it. */
  readonly deadline: number;
}

export interface RequestOptions {
  caller?: Caller;
  /**
   * Deadline in milliseconds; past it the request fails with 503
   * service_unavailable. Made while serving a request, it is cut to the time
   * that request has left.
   */
  timeoutMs?: number;
  headers?: Record<string, string>;
}

/**
 * A handler receives the parsed request and returns what its endpoint
 * declares: for a public route one of its declared answers (status and
 * body), for an internal endpoint what the reply schema accepts.
 */
export type Handler<E extends Endpoint> = (request: z.output<E["request"]>, ctx: RequestContext) => Promise<AnswerOf<E>>;

export interface EndpointBinding<E extends Endpoint = Endpoint> {
  endpoint: E;
  handler: Handler<E>;
}

/**
 * Handler<E>, as a conditional type: TypeScript then types an inline
 * handler with E already taken from the endpoint, so a route's statuses and
 * body fields keep their literal types (201, "other") and are checked
 * against what the route declares, rather than widened and refused.
 */
type HandlerOf<E extends Endpoint> = E extends Endpoint ? Handler<E> : never;

/** Binds a handler to its endpoint with the types checked: a route's handler may return only the answers its contract declares. */
export function bind<E extends Endpoint>(endpoint: E, handler: HandlerOf<E>): EndpointBinding {
  return { endpoint, handler } as unknown as EndpointBinding;
}

export interface ServiceInfo {
  name: string;
  version: string;
  description?: string;
}

export interface Stoppable {
  stop(): Promise<void>;
}

/** Endpoints being served: stoppable, and able to say whether they still are (readiness asks). */
export interface ServedEndpoints extends Stoppable {
  /** False once the endpoints stopped, whether asked to or not. */
  isServing(): boolean;
}

/** One delivered event. The handler resolving acknowledges it; throwing asks for redelivery. */
export interface EventMessage<E extends EventDef = EventDef> {
  readonly subject: E["subject"];
  readonly payload: PayloadOf<E>;
  readonly deliveryCount: number;
  /** Position in the stream; increases with each stored event. */
  readonly streamSequence: number;
  /**
   * Given to batch consumers when the bus knows it: every event of this
   * consumer before this one has a stream sequence at most this. On NATS
   * (a stream-wide consumer sees every sequence of its stream) the sequence
   * before; in process, the consumer's acknowledged position for a batch's
   * first event, the event before it for the others. A consumer that has
   * handled through this sequence misses nothing before the event.
   */
  readonly follows?: number;
  /** What the publisher stored with the event: its W3C trace context (traceparent, tracestate). */
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * A delivered event of one of the declarations E, as their consumer is
 * handed it: one member per declaration, each with its subject's type and
 * its payload as that declaration's schema gives it back (the bus parses it
 * on arrival), so isEvent tells them apart.
 */
export type EventMessageOf<E extends EventDef> = E extends EventDef ? EventMessage<E> : never;

/** Whether `message` is an event of `event`: its payload is then typed by that declaration. */
export function isEvent<E extends EventDef>(message: EventMessage, event: E): message is EventMessage<E> {
  return message.subject === event.subject;
}

export interface PublishOptions {
  msgId: string;
  /** The msgId of the event this one must directly follow in its stream. */
  after?: string;
}

/** The stream's last event is not the one `after` named; nothing was stored. */
export class PublishOrderError extends Error {
  constructor(readonly msgId: string, readonly after: string) {
    super(`event ${msgId} was not stored: the stream's last event is not ${after}`);
    this.name = "PublishOrderError";
  }
}

/**
 * Thrown by a batch handler whose batch came before events it must follow
 * (another consumer of the same durable holds them): an expected wait, not a
 * failure, so the batch is retried after the back-off without a warning.
 */
export class BatchNotReady extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BatchNotReady";
  }
}

export interface ConsumerOptions<E extends EventDef = EventDef> {
  /** Durable consumer name: a restarted consumer with the same name resumes where it stopped. */
  durable: string;
  /** The declarations consumed: each message is one of theirs (EventMessageOf), its payload parsed by its schema. */
  events: readonly E[];
  /** Redelivery delays in ms after each failed attempt; the last repeats. */
  backoffMs?: number[];
  /** Attempts before an event is given up (and logged); 0 means forever. */
  maxDeliver?: number;
}

export interface BatchConsumerOptions<E extends EventDef = EventDef> {
  /** Durable consumer name: a restarted consumer with the same name resumes where it stopped. */
  durable: string;
  /** The declarations consumed, as for consume(). */
  events: readonly E[];
  /** Most events handed over at once. */
  maxBatch: number;
  /** Delays in ms before each retry of a failed batch; the last repeats. */
  backoffMs?: number[];
}

/** A batch holds at least one event; anything else is a programming error, refused at once. */
export function checkMaxBatch(maxBatch: number): number {
  if (!Number.isInteger(maxBatch) || maxBatch < 1) throw new RangeError(`maxBatch must be a positive integer, not ${maxBatch}`);
  return maxBatch;
}

export interface Bus {
  /** Sends a request and waits for the reply, checked on arrival against the endpoint's `received`; errors arrive as AppError. */
  request<E extends Endpoint>(endpoint: E, payload: RequestOf<E>, options?: RequestOptions): Promise<ReplyOf<E>>;
  /**
   * Sends a public route's request for a client (the gateway): the reply is an
   * HttpReply whose body stays the JSON the service sent, as a JsonText, to be
   * passed on untouched; its status and headers are checked, not its body.
   */
  forward(endpoint: RouteEndpoint, payload: RequestOf<RouteEndpoint>, options?: RequestOptions): Promise<HttpReply>;
  /** Serves endpoints in a queue group named after the service, so replicas share load. */
  serve(service: ServiceInfo, bindings: EndpointBinding[]): Promise<ServedEndpoints>;
  /**
   * Stores an event durably; `msgId` de-duplicates a republished event. With
   * `after`, the event is stored only right after the event with that msgId
   * (else PublishOrderError): events published without waiting for one
   * another are then never stored out of order. A duplicate is accepted
   * whatever `after` says.
   */
  publish<E extends EventDef>(event: E, payload: PayloadOf<E>, options: PublishOptions): Promise<void>;
  /**
   * Stores an event as publish() does, its payload given as JSON text that
   * was checked against the event's schema when it was written (an outbox
   * row's): a bus that carries text sends it as it is, neither checked nor
   * encoded again.
   */
  publishStored<E extends EventDef>(event: E, json: string, options: PublishOptions): Promise<void>;
  /**
   * Consumes events durably, at least once, in stream order per consumer.
   * Each payload is parsed on arrival by its declaration's schema; one that
   * fails it fails as a throwing handler does.
   */
  consume<E extends EventDef>(options: ConsumerOptions<E>, handler: (message: EventMessageOf<E>) => Promise<void>): Promise<Stoppable>;
  /**
   * Consumes events as consume() does, but hands the handler every event
   * already waiting, up to maxBatch, in stream order: it never waits to fill
   * a batch, so a lone event goes at once and a backlog goes in few calls.
   * Resolving acknowledges the batch; throwing retries the same batch after a
   * back-off, for as long as it takes, before any later event.
   */
  consumeBatches<E extends EventDef>(options: BatchConsumerOptions<E>, handler: (messages: EventMessageOf<E>[]) => Promise<void>): Promise<Stoppable>;
  /** Sends a notice to every live subscriber; nothing is stored. */
  notify<N extends NoticeDef>(notice: N, payload: PayloadOf<N>): Promise<void>;
  onNotice<N extends NoticeDef>(notice: N, handler: (payload: PayloadOf<N>) => void): Promise<Stoppable>;
  /** Whether the bus can carry messages now (for readiness). */
  isConnected(): boolean;
  /**
   * The largest message the bus carries, headers included, in bytes, as the
   * server announces it (NATS's max_payload); undefined when it sets none.
   * A reply that could grow past it must be cut to fit.
   */
  maxMessageBytes(): number | undefined;
  close(): Promise<void>;
}

export const DEFAULT_TIMEOUT_MS = 5_000;
export const DEFAULT_BACKOFF_MS = [500, 2_000, 10_000, 30_000, 60_000];
