import { AppError, internalError, unavailable } from "@sched/errors";
import type { Logger } from "@sched/logging";
import type { Endpoint, EventDef, NoticeDef, PayloadOf, ReplyOf, RequestOf, StreamDef } from "@sched/proto";
import { headers as natsHeaders, nanos, type Msg, type MsgHdrs, type NatsConnection } from "@nats-io/nats-core";
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, StorageType, type JetStreamClient, type JetStreamManager, type JsMsg } from "@nats-io/jetstream";
import { ServiceError, Svcm, type ServiceMsg } from "@nats-io/services";
import { connect } from "@nats-io/transport-node";
import { CALLER_HEADER, decodeCaller, dispatch, encodeCaller } from "./codec.js";
import {
  DEFAULT_BACKOFF_MS,
  DEFAULT_TIMEOUT_MS,
  type Bus,
  type ConsumerOptions,
  type EndpointBinding,
  type EventMessage,
  type RequestOptions,
  type ServiceInfo,
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
  /** How long one pull waits for an event (at least 1 s, the client's minimum); bounds how long a consumer takes to stop. */
  pullExpiresMs?: number;
}

/** Events published again within this window with the same msgId are stored once. */
const DUPLICATE_WINDOW_MS = 2 * 60_000;

const encode = (value: unknown): string => JSON.stringify(value ?? null);

/** Connects to NATS and returns the bus over it. */
export async function connectNatsBus(options: NatsBusOptions): Promise<Bus> {
  const nc = await connect({ servers: options.servers, name: options.name, maxReconnectAttempts: -1, reconnectTimeWait: 1_000 });
  const jsm = await jetstreamManager(nc);
  return new NatsBus(nc, jetstream(nc), jsm, options);
}

/**
 * The bus over NATS: the services API for request/reply (queue group per
 * service, errors as service-error headers), JetStream for durable events,
 * core publish/subscribe for fan-out notices.
 */
class NatsBus implements Bus {
  private readonly streams = new Map<string, Promise<string>>();

  constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly options: NatsBusOptions,
  ) {}

  private subject(name: string): string {
    return `${this.options.namespace}.${name}`;
  }

  async request<E extends Endpoint>(endpoint: E, payload: RequestOf<E>, options: RequestOptions = {}): Promise<ReplyOf<E>> {
    const h = natsHeaders();
    if (options.caller) h.set(CALLER_HEADER, encodeCaller(options.caller));
    for (const [k, v] of Object.entries(options.headers ?? {})) h.set(k, v);
    let msg: Msg;
    try {
      msg = await this.nc.request(this.subject(endpoint.subject), encode(payload), { timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS, headers: h });
    } catch {
      // Timeout, no responder, or a closed connection: the caller sees a fast 503.
      throw unavailable();
    }
    if (ServiceError.isServiceError(msg)) throw AppError.fromJSON(msg.data.length > 0 ? msg.json() : {});
    return msg.json() as ReplyOf<E>;
  }

  async serve(service: ServiceInfo, bindings: EndpointBinding[]): Promise<Stoppable> {
    const svc = await new Svcm(this.nc).add({
      name: service.name,
      version: service.version,
      ...(service.description ? { description: service.description } : {}),
      queue: service.name,
    });
    for (const binding of bindings) {
      svc.addEndpoint(binding.endpoint.subject.replace(/[^A-Za-z0-9_-]/g, "_"), {
        subject: this.subject(binding.endpoint.subject),
        handler: (err, msg) => {
          if (err) {
            this.options.logger.error({ err, subject: binding.endpoint.subject }, "service endpoint failed");
            return;
          }
          void this.answer(binding, msg);
        },
      });
    }
    // Serving means the server knows the subscriptions: a request sent right after finds them.
    await this.nc.flush();
    return { stop: async () => void (await svc.stop()) };
  }

  private async answer(binding: EndpointBinding, msg: ServiceMsg): Promise<void> {
    const headers = headerRecord(msg.headers);
    try {
      let raw: unknown;
      try {
        raw = msg.json();
      } catch {
        throw new AppError("invalid_request", "The request is not valid JSON.");
      }
      const ctx = { subject: binding.endpoint.subject, caller: decodeCaller(headers[CALLER_HEADER]), headers };
      msg.respond(encode(await dispatch(binding, raw, ctx, this.options.logger)));
    } catch (err) {
      const appError = err instanceof AppError ? err : internalError();
      msg.respondError(appError.status, appError.message, encode(appError.toJSON()));
    }
  }

  private ensureStream(stream: StreamDef): Promise<string> {
    const name = `${this.options.namespace}_${stream.name}`;
    let ready = this.streams.get(name);
    if (!ready) {
      ready = (async () => {
        const config = {
          name,
          subjects: [`${this.subject(stream.subjectPrefix)}.>`],
          storage: StorageType.File,
          duplicate_window: nanos(DUPLICATE_WINDOW_MS),
        };
        try {
          await this.jsm.streams.info(name);
        } catch {
          try {
            await this.jsm.streams.add(config);
          } catch (err) {
            // Another replica may have created it first.
            await this.jsm.streams.info(name).catch(() => {
              throw err;
            });
          }
        }
        return name;
      })();
      ready.catch(() => this.streams.delete(name));
      this.streams.set(name, ready);
    }
    return ready;
  }

  async publish<E extends EventDef>(event: E, payload: PayloadOf<E>, options: { msgId: string }): Promise<void> {
    const checked = event.payload.parse(payload);
    try {
      await this.ensureStream(event.stream);
      await this.js.publish(this.subject(event.subject), encode(checked), { msgID: options.msgId });
    } catch (err) {
      this.options.logger.warn({ err, subject: event.subject }, "event publish failed");
      throw unavailable();
    }
  }

  async consume(options: ConsumerOptions, handler: (message: EventMessage) => Promise<void>): Promise<Stoppable> {
    const streams = new Set(options.events.map((e) => e.stream.name));
    if (streams.size !== 1) throw new Error("a consumer reads the events of exactly one stream");
    const stream = options.events[0]!.stream;
    const streamName = await this.ensureStream(stream);
    const bySubject = new Map(options.events.map((e) => [this.subject(e.subject), e]));
    // nats-server 2.9 takes one filter subject per consumer: one event, or the whole stream.
    const filter = options.events.length === 1 ? this.subject(options.events[0]!.subject) : `${this.subject(stream.subjectPrefix)}.>`;
    const backoff = options.backoffMs ?? DEFAULT_BACKOFF_MS;
    const maxDeliver = options.maxDeliver ?? 0;
    const config = {
      durable_name: options.durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: filter,
      max_deliver: maxDeliver > 0 ? maxDeliver : -1,
      ack_wait: nanos(this.options.ackWaitMs ?? 30_000),
    };
    try {
      await this.jsm.consumers.add(streamName, config);
    } catch {
      await this.jsm.consumers.update(streamName, options.durable, { filter_subject: filter, max_deliver: config.max_deliver, ack_wait: config.ack_wait });
    }
    const consumer = await this.js.consumers.get(streamName, options.durable);
    const expires = Math.max(1_000, this.options.pullExpiresMs ?? 1_000);
    let stopped = false;

    const settle = async (m: JsMsg): Promise<void> => {
      const def = bySubject.get(m.subject);
      if (!def) return m.ack();
      try {
        await handler({ subject: def.subject, payload: def.payload.parse(m.json()), deliveryCount: m.info.deliveryCount, streamSequence: m.seq });
        m.ack();
      } catch (err) {
        const attempts = m.info.deliveryCount;
        if (maxDeliver > 0 && attempts >= maxDeliver) {
          this.options.logger.error({ err, subject: def.subject, attempts }, "event given up after the last delivery");
          m.term();
          return;
        }
        this.options.logger.warn({ err, subject: def.subject, attempts }, "event handler failed; redelivering");
        m.nak(backoff[Math.min(attempts - 1, backoff.length - 1)] ?? 1_000);
      }
    };

    // One pull at a time: an event is only taken when the previous one is settled,
    // so stopping never strands a fetched but unprocessed event.
    const loop = (async () => {
      while (!stopped && !this.nc.isClosed()) {
        let m: JsMsg | null;
        try {
          m = await consumer.next({ expires });
        } catch (err) {
          if (stopped || this.nc.isClosed()) break;
          this.options.logger.warn({ err, durable: options.durable }, "event pull failed; retrying");
          await new Promise((r) => setTimeout(r, 500));
          continue;
        }
        if (m) await settle(m);
      }
    })();
    return {
      stop: async () => {
        stopped = true;
        await loop;
      },
    };
  }

  async notify<N extends NoticeDef>(notice: N, payload: PayloadOf<N>): Promise<void> {
    this.nc.publish(this.subject(notice.subject), encode(notice.payload.parse(payload)));
  }

  async onNotice<N extends NoticeDef>(notice: N, handler: (payload: PayloadOf<N>) => void): Promise<Stoppable> {
    const sub = this.nc.subscribe(this.subject(notice.subject), {
      callback: (err, msg) => {
        if (err) return;
        const parsed = notice.payload.safeParse(msg.json());
        if (parsed.success) handler(parsed.data as PayloadOf<N>);
      },
    });
    await this.nc.flush();
    return { stop: async () => sub.unsubscribe() };
  }

  isConnected(): boolean {
    return !this.nc.isClosed();
  }

  async close(): Promise<void> {
    if (!this.nc.isClosed()) await this.nc.drain();
  }
}

function headerRecord(h: MsgHdrs | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!h) return out;
  for (const [k, v] of h) out[k] = v[0] ?? "";
  return out;
}
